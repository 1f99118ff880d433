// A database that cannot be written: a real full disk (a tiny tmpfs, filled), and a file-size
// limit (RLIMIT_FSIZE, set on the running coordinator with prlimit). Writes must fail with
// UNAVAILABLE naming the problem, nothing recorded may be lost, the coordinator must keep
// serving, and the same call must succeed once the disk has room again. Mounting needs root
// (CI runs as root); that variant is skipped with the reason elsewhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "coordinator/core/checkpoint_store.h"
#include "coordinator/rpc/client.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace full_disk_test {

namespace fs = std::filesystem;

// A study whose config is big enough that SQLite needs new pages (and WAL frames) for it.
std::string BigConfig(const std::string& name) {
  return "name: " + name + "\n# " + std::string(100000, 'x') +
         "\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-2}\n";
}

// Studies over gRPC against one coordinator process.
class Client {
 public:
  explicit Client(int port)
      : stub_(v1::Studies::NewStub(coordinator::MakeChannel("127.0.0.1:" + std::to_string(port)))) {
  }

  grpc::Status Create(const std::string& config) {
    v1::CreateStudyRequest req;
    req.set_config(config);
    v1::CreateStudyResponse resp;
    return stub_->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  }
  grpc::Status CreateSmall(const std::string& name) {
    return Create("name: " + name +
                  "\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-2}\n");
  }
  std::vector<std::string> StudyNames() {
    v1::ListStudiesResponse list;
    const grpc::Status s = stub_->ListStudies(coordinator::MakeContext("").get(), {}, &list);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> names;
    for (const auto& study : list.studies()) names.push_back(study.name());
    return names;
  }

 private:
  std::unique_ptr<v1::Studies::Stub> stub_;
};

void ExpectRefusedClearly(const grpc::Status& s) {
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("database write failed"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("nothing was changed, retry later"), std::string::npos)
      << s.error_message();
}

class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_ = TempDir("fulldisk") + "/mnt";
    fs::create_directories(mount_);
    const std::string cmd = "mount -t tmpfs -o size=512k sift-full-test " + mount_ + " 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) std::system(("umount -l " + mount_).c_str());
  }
  // Fills the file system to the last byte.
  void Fill() {
    std::ofstream f(mount_ + "/filler", std::ios::binary);
    std::string block(4096, 'x');
    while (f.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  void Unfill() { fs::remove(mount_ + "/filler"); }

  std::string mount_;
  bool mounted_ = false;
};

TEST_F(FullDisk, CheckpointUploadSaysTheDiskIsFullAndLeavesNoPartialFile) {
  const std::string path = mount_ + "/trial-0-e1.ckpt";
  Fill();
  {
    coordinator::CheckpointUpload upload(path);
    coordinator::Status s = upload.Append(0, std::string(64 << 10, 'c'));
    if (s.ok()) s = upload.Finish(64 << 10, 0);
    EXPECT_EQ(s.code, coordinator::Status::Code::kResourceExhausted) << s.message;
    EXPECT_NE(s.message.find("No space left on device"), std::string::npos) << s.message;
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".part"));
}

TEST_F(FullDisk, CoordinatorRefusesNewWritesClearlyAndRecoversWithTheDisk) {
  std::unique_ptr<Process> coordinator;
  const int port = StartSiftCoordinator(&coordinator, mount_ + "/sift.db", {},
                                        TempDir("fulldisk") + "/coordinator.log");
  ASSERT_NE(port, 0);
  Client client(port);
  ASSERT_TRUE(client.CreateSmall("before").ok());

  Fill();
  const grpc::Status s = client.Create(BigConfig("during"));
  ExpectRefusedClearly(s);
  EXPECT_NE(s.error_message().find("full"), std::string::npos) << s.error_message();

  // Still serving, with what was recorded before intact.
  EXPECT_EQ(client.StudyNames(), std::vector<std::string>{"before"});
  EXPECT_TRUE(coordinator->Running());

  Unfill();
  EXPECT_TRUE(client.Create(BigConfig("after")).ok());
  EXPECT_EQ(client.StudyNames(), (std::vector<std::string>{"before", "after"}));
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(20), 0);
}

// No root needed: the coordinator's own file-size limit is lowered under it, then raised.
TEST(FileSizeLimit, CoordinatorRefusesWritesPastItAndRecoversWhenItIsRaised) {
  const std::string dir = TempDir("fsize");
  fs::remove(dir + "/sift.db");
  fs::remove(dir + "/sift.db-wal");
  std::unique_ptr<Process> coordinator;
  const int port =
      StartSiftCoordinator(&coordinator, dir + "/sift.db", {}, dir + "/coordinator.log");
  ASSERT_NE(port, 0);
  Client client(port);
  ASSERT_TRUE(client.CreateSmall("before").ok());

  // Smaller than what a 100 KB study adds to the write-ahead log.
  rlimit low{16 << 10, RLIM_INFINITY};
  ASSERT_EQ(prlimit(coordinator->pid(), RLIMIT_FSIZE, &low, nullptr), 0);
  ExpectRefusedClearly(client.Create(BigConfig("during")));
  // SIGXFSZ did not kill it, and what was recorded is still there.
  EXPECT_TRUE(coordinator->Running());
  EXPECT_EQ(client.StudyNames(), std::vector<std::string>{"before"});

  rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  ASSERT_EQ(prlimit(coordinator->pid(), RLIMIT_FSIZE, &unlimited, nullptr), 0);
  const grpc::Status after = client.Create(BigConfig("after"));
  EXPECT_TRUE(after.ok()) << after.error_message();
  EXPECT_EQ(client.StudyNames(), (std::vector<std::string>{"before", "after"}));
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(20), 0) << coordinator->Log();
}

}  // namespace full_disk_test
}  // namespace sift::testing

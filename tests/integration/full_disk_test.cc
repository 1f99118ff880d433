// A real full disk: the coordinator's database and checkpoint store on a tiny tmpfs that is then
// filled. Writes must fail with RESOURCE_EXHAUSTED naming the problem, nothing recorded may be
// lost, and the coordinator must keep serving. Needs root to mount (CI runs as root); skipped
// with the reason elsewhere.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "coordinator/checkpoint_store.h"
#include "coordinator/client.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace {

namespace fs = std::filesystem;

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

TEST_F(FullDisk, CoordinatorRefusesNewWritesClearlyAndKeepsServing) {
  std::unique_ptr<Process> coordinator(new Process(
      {BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db", mount_ + "/sift.db",
       "--prices", SourceDir() + "/examples/prices.json"},
      TempDir("fulldisk") + "/coordinator.log"));
  std::smatch m;
  const std::regex port_re("listening on ([0-9]+)");
  std::string log;
  for (int i = 0; i < 200 && !std::regex_search(log = coordinator->Log(), m, port_re); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(std::regex_search(log, m, port_re)) << log;
  auto stub = v1::Studies::NewStub(coordinator::MakeChannel("127.0.0.1:" + m[1].str()));
  auto create = [&](const std::string& name) {
    v1::CreateStudyRequest req;
    req.set_config("name: " + name +
                   "\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-2}\n");
    v1::CreateStudyResponse resp;
    return stub->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  };
  ASSERT_TRUE(create("before").ok());

  Fill();
  // The config is big enough that SQLite needs new pages for it.
  v1::CreateStudyRequest req;
  req.set_config("name: during\n# " + std::string(200000, 'x') +
                 "\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-2}\n");
  v1::CreateStudyResponse resp;
  grpc::Status s = stub->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("full"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("nothing was changed"), std::string::npos);

  // Still serving, with what was recorded before intact.
  v1::ListStudiesResponse list;
  ASSERT_TRUE(stub->ListStudies(coordinator::MakeContext("").get(), {}, &list).ok());
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).name(), "before");
  EXPECT_TRUE(coordinator->Running());

  Unfill();
  EXPECT_TRUE(create("after").ok());
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(20), 0);
}

}  // namespace
}  // namespace sift::testing

#include "coordinator/checkpoint_store.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "common/checkpoint_names.h"

namespace sift::coordinator {
namespace {

namespace fs = std::filesystem;

uint32_t Crc(const std::string& s) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sift-ckpt-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CheckpointStoreTest, ChunkedUploadRoundTripsThroughDownload) {
  const std::string data(2500, 'x');
  const std::string path = (dir_ / "study-1" / "trial-0-e1.ckpt").string();
  {
    CheckpointUpload up(path);
    ASSERT_TRUE(up.Append(0, data.substr(0, 1000)).ok());
    ASSERT_TRUE(up.Append(1000, data.substr(1000)).ok());
    ASSERT_TRUE(up.Finish(2500, Crc(data)).ok());
  }
  std::string back;
  int chunks = 0;
  ASSERT_TRUE(ReadCheckpointChunks(path, 1024, [&](int64_t offset, const std::string& d,
                                                   bool last, uint32_t crc) {
                EXPECT_EQ(offset, static_cast<int64_t>(back.size()));
                back += d;
                ++chunks;
                if (last) EXPECT_EQ(crc, Crc(data));
                return true;
              }).ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(chunks, 3);
}

TEST_F(CheckpointStoreTest, CorruptOrOutOfOrderUploadsLeaveTheGoodFileAlone) {
  const std::string path = (dir_ / "trial-0-e1.ckpt").string();
  {
    CheckpointUpload up(path);
    ASSERT_TRUE(up.Append(0, "good").ok());
    ASSERT_TRUE(up.Finish(4, Crc("good")).ok());
  }
  {
    CheckpointUpload up(path);
    ASSERT_TRUE(up.Append(0, "evil").ok());
    Status s = up.Finish(4, Crc("good"));  // the bytes changed on the way
    EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
    EXPECT_NE(s.message.find("arrived corrupt"), std::string::npos) << s.message;
  }
  {
    CheckpointUpload up(path);
    EXPECT_EQ(up.Append(5, "late").code, Status::Code::kInvalidArgument);
  }  // abandoned: its partial file is removed
  std::ifstream f(path);
  std::string content;
  f >> content;
  EXPECT_EQ(content, "good");
  EXPECT_FALSE(fs::exists(path + ".part"));
  EXPECT_EQ(ReadCheckpointChunks((dir_ / "nope.ckpt").string(), 10,
                                 [](auto, auto&, auto, auto) { return true; })
                .code,
            Status::Code::kNotFound);
}

TEST(CheckpointNames, OnlyPlainNamesOfTheTrialItself) {
  EXPECT_TRUE(common::IsCheckpointNameOf(common::EpochCheckpointName(3, 2), 3));
  EXPECT_TRUE(common::IsCheckpointNameOf(common::PreemptCheckpointName(3, 2, 17), 3));
  EXPECT_FALSE(common::IsCheckpointNameOf(common::EpochCheckpointName(3, 2), 4));
  EXPECT_FALSE(common::IsCheckpointNameOf(common::EpochCheckpointName(31, 2), 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e../../x.ckpt", 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e1/x.ckpt", 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e1.ckpt.sh", 3));
}

}  // namespace
}  // namespace sift::coordinator

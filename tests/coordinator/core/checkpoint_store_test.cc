#include "coordinator/core/checkpoint_store.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/checkpoint_file.h"
#include "common/checkpoint_names.h"

namespace sift::coordinator {
namespace checkpoint_store_test {

namespace fs = std::filesystem;

uint32_t Crc(const std::string& s) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::string ReadAll(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sift-ckpt-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The bytes of a checkpoint file around `payload`, as a worker writes it.
  std::string Checkpoint(const std::string& payload) {
    const fs::path tmp = dir_ / "framed.tmp";
    common::WriteFramedFile(tmp.string(), common::kCheckpointMagic, common::kCheckpointVersion,
                            payload);
    std::string bytes = ReadAll(tmp);
    fs::remove(tmp);
    return bytes;
  }

  // Uploads `bytes` as `name` in one chunk, with the transport CRC of exactly those bytes.
  Status Upload(const std::string& name, const std::string& bytes) {
    CheckpointUpload up((dir_ / name).string());
    if (Status s = up.Append(0, bytes); !s.ok()) return s;
    return up.Finish(static_cast<int64_t>(bytes.size()), Crc(bytes));
  }

  fs::path dir_;
};

TEST_F(CheckpointStoreTest, ChunkedUploadRoundTripsThroughDownload) {
  const std::string data = Checkpoint(std::string(2476, 'x'));
  ASSERT_EQ(data.size(), 2500u);
  const std::string path = (dir_ / "study-1" / "trial-0-e1.ckpt").string();
  {
    CheckpointUpload up(path);
    ASSERT_TRUE(up.Append(0, data.substr(0, 1000)).ok());
    ASSERT_TRUE(up.Append(1000, data.substr(1000)).ok());
    ASSERT_TRUE(up.Finish(2500, Crc(data)).ok());
  }
  std::string back;
  int chunks = 0;
  ASSERT_TRUE(
      ReadCheckpointChunks(path, 1024,
                           [&](int64_t offset, const std::string& d, bool last, uint32_t crc) {
                             EXPECT_EQ(offset, static_cast<int64_t>(back.size()));
                             back += d;
                             ++chunks;
                             if (last) {
                               EXPECT_EQ(crc, Crc(data));
                             }
                             return true;
                           })
          .ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(chunks, 3);
}

TEST_F(CheckpointStoreTest, CorruptOrOutOfOrderUploadsLeaveTheGoodFileAlone) {
  const std::string path = (dir_ / "trial-0-e1.ckpt").string();
  const std::string good = Checkpoint("good"), evil = Checkpoint("evil");
  ASSERT_TRUE(Upload("trial-0-e1.ckpt", good).ok());
  {
    CheckpointUpload up(path);
    ASSERT_TRUE(up.Append(0, evil).ok());
    Status s = up.Finish(static_cast<int64_t>(good.size()), Crc(good));  // changed on the way
    EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
    EXPECT_NE(s.message.find("arrived corrupt"), std::string::npos) << s.message;
  }
  {
    CheckpointUpload up(path);
    EXPECT_EQ(up.Append(5, "late").code, Status::Code::kInvalidArgument);
  }  // abandoned: its partial file is removed
  EXPECT_EQ(ReadAll(path), good);
  EXPECT_FALSE(fs::exists(path + ".part"));
  EXPECT_EQ(ReadCheckpointChunks((dir_ / "nope.ckpt").string(), 10,
                                 [](auto, auto&, auto, auto) { return true; })
                .code,
            Status::Code::kNotFound);
}

// Sent intact, but damaged before it was sent (a worker's disk or memory): refused with what is
// wrong, and the trial's stored checkpoint under that name stays as it was.
TEST_F(CheckpointStoreTest, DamagedCheckpointsAreRefusedAndTheStoredOneStays) {
  const std::string good = Checkpoint(std::string(4000, 'g'));
  ASSERT_TRUE(Upload("trial-0-e2.ckpt", good).ok());
  std::string truncated = good.substr(0, good.size() / 2);
  std::string bad_magic = good;
  bad_magic.replace(0, 8, "GARBAGE!");
  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x40;
  const std::pair<std::string, std::string> cases[] = {
      {truncated, "truncated: header promises 4000 payload bytes, file has 1988"},
      {bad_magic, "bad magic"},
      {flipped, "checksum mismatch"},
      {"", "shorter than the header"}};
  for (const auto& [bytes, why] : cases) {
    Status s = Upload("trial-0-e2.ckpt", bytes);
    EXPECT_EQ(s.code, Status::Code::kInvalidArgument) << why;
    EXPECT_NE(s.message.find("trial-0-e2.ckpt is damaged"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find(why), std::string::npos) << s.message;
    EXPECT_EQ(s.message.find(".part"), std::string::npos) << s.message;
    EXPECT_EQ(ReadAll(dir_ / "trial-0-e2.ckpt"), good) << why;
    EXPECT_FALSE(fs::exists(dir_ / "trial-0-e2.ckpt.part")) << why;
  }
  // A damaged newer one is not stored at all.
  EXPECT_FALSE(Upload("trial-0-e3.ckpt", truncated).ok());
  EXPECT_FALSE(fs::exists(dir_ / "trial-0-e3.ckpt"));
}

TEST(CheckpointNames, OnlyPlainNamesOfTheTrialItself) {
  EXPECT_TRUE(common::IsCheckpointNameOf(common::EpochCheckpointName(3, 2), 3));
  EXPECT_TRUE(common::IsCheckpointNameOf(common::PreemptCheckpointName(3, 2, 17), 3));
  EXPECT_FALSE(common::IsCheckpointNameOf(common::EpochCheckpointName(3, 2), 4));
  EXPECT_FALSE(common::IsCheckpointNameOf(common::EpochCheckpointName(31, 2), 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e../../x.ckpt", 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e1/x.ckpt", 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e1.ckpt.sh", 3));
  EXPECT_FALSE(common::IsCheckpointNameOf("trial-3-e-1.ckpt", 3));
}

}  // namespace checkpoint_store_test
}  // namespace sift::coordinator

#include "worker/trainer/checkpoint.h"

#include <gtest/gtest.h>

#include "common/framed_file.h"
#include "tests/worker/model_state.h"
#include "tests/worker/test_util.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace checkpoint_test {

using common::FramedFileError;
using common::ReadFramedFile;
using common::WriteFramedFile;

TrainerOptions Tiny() {
  TrainerOptions o;
  o.hp.hidden = 32;
  o.hp.depth = 1;
  o.hp.batch_size = 64;
  o.seed = 3;
  return o;
}

std::string LoadError(const TrainerOptions& o, std::shared_ptr<const Datasets> data,
                      const std::string& path) {
  Trainer t(o, data);
  try {
    t.LoadCheckpoint(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "loaded";
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
    Trainer t(Tiny(), data_);
    t.TrainEpoch();
    path_ = dir_ / "ckpt";
    t.SaveCheckpoint(path_);
    bytes_ = testing::ReadFile(path_);
  }
  testing::TempDir dir_;
  std::shared_ptr<const Datasets> data_;
  std::string path_, bytes_;
};

TEST_F(CheckpointTest, RoundTrips) {
  EXPECT_EQ(LoadError(Tiny(), data_, path_), "loaded");
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(CheckpointTest, FlippedByteIsRejected) {
  for (size_t at : {bytes_.size() / 2, bytes_.size() - 1}) {
    std::string bad = bytes_;
    bad[at] ^= 0x01;
    testing::WriteFile(path_, bad);
    const std::string e = LoadError(Tiny(), data_, path_);
    EXPECT_NE(e.find(path_), std::string::npos) << e;
    EXPECT_NE(e.find("checksum"), std::string::npos) << e;
  }
}

TEST_F(CheckpointTest, TruncatedIsRejected) {
  for (size_t size : {size_t{0}, size_t{10}, bytes_.size() - 1}) {
    testing::WriteFile(path_, bytes_.substr(0, size));
    const std::string e = LoadError(Tiny(), data_, path_);
    EXPECT_NE(e.find(path_), std::string::npos) << e;
    EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  }
}

TEST_F(CheckpointTest, OtherFilesAndConfigurationsAreRejected) {
  testing::WriteFile(path_, "not a checkpoint at all, just some text");
  EXPECT_NE(LoadError(Tiny(), data_, path_).find("bad magic"), std::string::npos);
  EXPECT_NE(LoadError(Tiny(), data_, dir_ / "missing").find("cannot open"), std::string::npos);

  testing::WriteFile(path_, bytes_);
  TrainerOptions wider = Tiny();
  wider.hp.hidden = 64;
  EXPECT_NE(LoadError(wider, data_, path_).find("another configuration"), std::string::npos);
  auto more = testing::SmallFashionMnist(/*train=*/512, /*val=*/64, /*test=*/64);
  EXPECT_NE(LoadError(Tiny(), more, path_).find("training samples"), std::string::npos);
}

// Population-based training resumes a member from another's checkpoint with explored values:
// each value `sift validate` lets change (common/config/config_pbt.cc) must load into the copied
// state and take effect from the next step.
TEST_F(CheckpointTest, ResumesWithChangedMutableValues) {
  auto resumed_loss = [&](const TrainerOptions& o, const std::string& path) {
    Trainer t(o, data_);
    t.LoadCheckpoint(path);
    EXPECT_EQ(t.epoch(), 1);
    return t.TrainEpoch().train_loss;
  };
  const double same = resumed_loss(Tiny(), path_);
  ASSERT_EQ(resumed_loss(Tiny(), path_), same);  // so a difference below is the value's doing
  TrainerOptions lr = Tiny(), decay = Tiny(), dropout = Tiny();
  lr.hp.lr *= 10;
  decay.hp.weight_decay = 0.5;
  dropout.hp.dropout = 0.5;
  for (const TrainerOptions* o : {&lr, &decay, &dropout}) {
    EXPECT_NE(resumed_loss(*o, path_), same);
  }
  // Accumulation splits each batch in micro-batches: the same step, summed in another order.
  TrainerOptions accumulated = Tiny();
  accumulated.hp.micro_batch = Tiny().hp.batch_size / 4;
  EXPECT_NEAR(resumed_loss(accumulated, path_), same, 0.01 * same);

  TrainerOptions sgd = Tiny();
  sgd.hp.optimizer = "sgd";
  sgd.hp.lr = 0.05;
  const std::string sgd_path = dir_ / "sgd";
  {
    Trainer t(sgd, data_);
    t.TrainEpoch();
    t.SaveCheckpoint(sgd_path);
  }
  const double sgd_same = resumed_loss(sgd, sgd_path);
  TrainerOptions momentum = sgd;
  momentum.hp.momentum = 0.5;
  EXPECT_NE(resumed_loss(momentum, sgd_path), sgd_same);
}

// The copied state is the donor's bit for bit; only the explored value is the member's own.
TEST_F(CheckpointTest, ANewLearningRateTakesOverAndTheWeightsStayBitwise) {
  Trainer donor(Tiny(), data_);
  donor.TrainEpoch();
  const std::string path = dir_ / "donor";
  donor.SaveCheckpoint(path);
  TrainerOptions explored = Tiny();
  explored.hp.lr *= 1.2;
  Trainer member(explored, data_);
  member.LoadCheckpoint(path);
  testing::ExpectBitwiseEqual(donor, member);
  EXPECT_EQ(member.epoch(), donor.epoch());
  EXPECT_DOUBLE_EQ(member.learning_rate(), 1.2 * donor.learning_rate())
      << "the checkpoint's learning rate must not come back";
}

TEST(FramedFileTest, RoundTripAndVersion) {
  testing::TempDir dir;
  WriteFramedFile(dir / "f", "TESTTEST", 3, std::string("payload\0with nul", 16));
  EXPECT_EQ(ReadFramedFile(dir / "f", "TESTTEST", 3), std::string("payload\0with nul", 16));
  EXPECT_THROW(ReadFramedFile(dir / "f", "TESTTEST", 4), FramedFileError);
  EXPECT_THROW(ReadFramedFile(dir / "f", "OTHEROTH", 3), FramedFileError);
}

}  // namespace checkpoint_test
}  // namespace sift::worker

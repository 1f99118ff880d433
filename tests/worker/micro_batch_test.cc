// `micro_batch: auto`: memory measured on this machine decides the micro-batch.
#include "worker/trainer/micro_batch.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "worker/trainer/data.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace micro_batch_test {

constexpr int64_t kGiB = int64_t{1} << 30;

common::HParams Mlp() {
  common::HParams hp;
  hp.model = "mlp";
  hp.hidden = 512;
  hp.depth = 2;
  hp.batch_size = 256;
  hp.micro_batch = common::kAutoMicroBatch;
  hp.precision = "fp32";  // the figures below are fp32's; `auto` is bf16 on AVX512-BF16 CPUs
  return hp;
}

common::HParams Cnn() {
  common::HParams hp = Mlp();
  hp.model = "cnn";
  hp.channels = 32;
  return hp;
}

TEST(MicroBatch, WholeBatchWhenMemoryIsPlenty) {
  const MicroBatchChoice c = ChooseMicroBatch(Mlp(), "cpu", 8 * kGiB);
  EXPECT_EQ(c.micro_batch, 256);
  EXPECT_EQ(c.eval_batch, kDefaultEvalBatch);
  EXPECT_EQ(c.limit_bytes, 8 * kGiB);
  EXPECT_NE(c.Describe().find("micro-batch 256"), std::string::npos) << c.Describe();
}

TEST(MicroBatch, MeasuredFiguresMatchTheModels) {
  const MicroBatchChoice mlp = ChooseMicroBatch(Mlp(), "cpu", 8 * kGiB);
  // Autograd keeps at least the input and both hidden activations of each sample (floats).
  EXPECT_GE(mlp.sample_bytes, (784 + 512 + 256) * 4);
  EXPECT_LE(mlp.sample_bytes, 20 * (784 + 512 + 256) * 4);
  // 784*512 + 512 + 512*256 + 256 + 256*10 + 10 parameters: weight, gradient, two Adam slots.
  EXPECT_EQ(mlp.fixed_bytes, int64_t{535818} * 4 * 4);
  // The CNN's first block keeps its convolution's output (32 channels of 28x28 floats) for
  // backward, which holds that output's gradient at the same time.
  const MicroBatchChoice cnn = ChooseMicroBatch(Cnn(), "cpu", 8 * kGiB);
  EXPECT_GE(cnn.sample_bytes, 2 * 32 * 28 * 28 * 4);
  EXPECT_GT(cnn.sample_bytes, 10 * mlp.sample_bytes);
  EXPECT_LT(cnn.eval_sample_bytes, cnn.sample_bytes);  // no activations kept for backward
  std::printf("mlp: %s\ncnn: %s\n", mlp.Describe().c_str(), cnn.Describe().c_str());
}

// The probe used to feed every model a 28x28 grey image whatever the data: a CSV row's MLP was
// measured on 784 inputs, a colour image's CNN on one channel. It now feeds the data's shape.
TEST(MicroBatch, ProbesWithTheDatasShape) {
  const MicroBatchChoice rows = ChooseMicroBatch(Mlp(), "cpu", 8 * kGiB, ModelShape{{30}, 2});
  EXPECT_EQ(rows.fixed_bytes, int64_t{30 * 512 + 512 + 512 * 256 + 256 + 256 * 2 + 2} * 4 * 4);
  const MicroBatchChoice grey = ChooseMicroBatch(Cnn(), "cpu", 8 * kGiB);
  const MicroBatchChoice colour =
      ChooseMicroBatch(Cnn(), "cpu", 8 * kGiB, ModelShape{{3, 56, 56}, 10});
  // Four times the pixels: the first block's kept activations grow with them.
  EXPECT_GT(colour.sample_bytes, 3 * grey.sample_bytes);
}

TEST(MicroBatch, SplitsTheBatchWhenOnlyPartOfItFits) {
  const MicroBatchChoice full = ChooseMicroBatch(Cnn(), "cpu", 8 * kGiB);
  // Room for 70 samples: the largest divisor of 256 that fits is 64 (accumulated 4 times).
  const auto limit = static_cast<int64_t>(
      (full.fixed_bytes + 70 * std::max(full.sample_bytes, full.eval_sample_bytes)) *
      kMemoryMargin);
  const MicroBatchChoice c = ChooseMicroBatch(Cnn(), "cpu", limit);
  EXPECT_EQ(c.micro_batch, 64) << c.Describe();
  EXPECT_GE(c.eval_batch, 64);
  EXPECT_LT(c.eval_batch, kDefaultEvalBatch);
  // Measured the same way twice: the same figures.
  EXPECT_EQ(c.sample_bytes, full.sample_bytes);
}

TEST(MicroBatch, RefusesClearlyWhenNotOneSampleFits) {
  common::HParams hp = Cnn();
  hp.channels = 64;  // 1.2 MB of parameter state alone
  try {
    ChooseMicroBatch(hp, "cpu", 1 << 20);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("micro_batch auto: one sample needs"), std::string::npos) << what;
    EXPECT_NE(what.find("more than the 1 MiB this worker may use"), std::string::npos) << what;
  }
}

TEST(MicroBatch, DefaultLimitIsThisMachinesAvailableMemory) {
  const int64_t available = AvailableMemoryBytes();
  ASSERT_GT(available, 0);
  const MicroBatchChoice c = ChooseMicroBatch(Mlp(), "cpu", 0);
  EXPECT_GT(c.limit_bytes, 0);
  EXPECT_LE(c.limit_bytes, 2 * available);  // the same reading, give or take other processes
}

TEST(MicroBatch, TrainerTrainsWithTheChosenSplit) {
  common::HParams hp = Cnn();
  hp.channels = 8;
  hp.batch_size = 32;
  const MicroBatchChoice full = ChooseMicroBatch(hp, "cpu", 8 * kGiB);
  const auto limit = static_cast<int64_t>(
      (full.fixed_bytes + 10 * std::max(full.sample_bytes, full.eval_sample_bytes)) *
      kMemoryMargin);
  const MicroBatchChoice c = ChooseMicroBatch(hp, "cpu", limit);
  ASSERT_EQ(c.micro_batch, 8);
  auto data = std::make_shared<Datasets>();
  data->train.images = torch::randn({64, 1, 28, 28});
  data->train.labels = torch::randint(0, 10, {64}, torch::kLong);
  data->val = data->train;
  data->test = data->train;
  TrainerOptions o;
  o.hp = hp;
  o.hp.micro_batch = c.micro_batch;
  o.eval_batch = c.eval_batch;
  o.max_epochs = 1;
  Trainer trainer(o, data);
  const EpochMetrics m = trainer.TrainEpoch();
  EXPECT_TRUE(std::isfinite(m.train_loss));
  EXPECT_EQ(trainer.epoch(), 1);
}

}  // namespace micro_batch_test
}  // namespace sift::worker

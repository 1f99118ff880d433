// What the trainer measures of its model (measure.h): trainable parameters against hand counts,
// and the forward time per validation sample, every epoch and again after a resume.
#include "worker/trainer/measure.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/worker/test_util.h"
#include "worker/trainer/precision.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace measure_test {

int64_t Linear(int64_t in, int64_t out) { return in * out + out; }

TEST(MeasureTest, MlpParamsAreItsLinearLayersAndNorms) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  TrainerOptions o = testing::SmallMlp(/*seed=*/1);  // 784-64-32-10
  EXPECT_EQ(Trainer(o, data).TrainEpoch().params,
            Linear(784, 64) + Linear(64, 32) + Linear(32, 10));
  o.hp.norm = "layer";  // a scale and a shift per hidden unit
  EXPECT_EQ(Trainer(o, data).TrainEpoch().params,
            Linear(784, 64) + Linear(64, 32) + Linear(32, 10) + 2 * (64 + 32));
}

TEST(MeasureTest, CnnParamsAreItsConvolutionsNormsAndHead) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  TrainerOptions o = testing::SmallMlp(/*seed=*/1);
  o.hp.model = "cnn";
  o.hp.channels = 8;
  o.hp.depth = 2;
  o.hp.kernel_size = 3;
  Trainer t(o, data);
  // 3x3 convolutions 1->8->16 without bias (batch norm's shift replaces it), batch norm's scale
  // and shift per channel (its running statistics are buffers), a 16->10 head.
  EXPECT_EQ(t.TrainEpoch().params, 1 * 8 * 9 + 2 * 8 + 8 * 16 * 9 + 2 * 16 + Linear(16, 10));
}

TEST(MeasureTest, FrozenParametersAreNotCounted) {
  torch::nn::Sequential net(torch::nn::Linear(4, 3), torch::nn::Linear(3, 2));
  EXPECT_EQ(TrainableParams(*net), Linear(4, 3) + Linear(3, 2));
  for (auto& p : net[0]->parameters()) p.set_requires_grad(false);
  EXPECT_EQ(TrainableParams(*net), Linear(3, 2));
}

// Positive, finite and the same every epoch (timed once per trainer); a trainer built to resume
// from a checkpoint times it again and counts the same parameters.
TEST(MeasureTest, InferenceMsIsReportedEveryEpochAndAfterResume) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  const TrainerOptions o = testing::SmallMlp(/*seed=*/2);
  testing::TempDir dir;
  Trainer t(o, data);
  const EpochMetrics first = t.TrainEpoch();
  EXPECT_GT(first.inference_ms, 0.0);
  EXPECT_TRUE(std::isfinite(first.inference_ms));
  const EpochMetrics second = t.TrainEpoch();
  EXPECT_EQ(second.inference_ms, first.inference_ms);
  EXPECT_EQ(second.params, first.params);
  t.SaveCheckpoint(dir / "ckpt");

  Trainer resumed(o, data);
  resumed.LoadCheckpoint(dir / "ckpt");
  const EpochMetrics third = resumed.TrainEpoch();
  EXPECT_EQ(third.epoch, 3);
  EXPECT_EQ(third.params, first.params);
  EXPECT_GT(third.inference_ms, 0.0);
  EXPECT_TRUE(std::isfinite(third.inference_ms));
}

TEST(MeasureTest, InferenceMsIsTimedInTheTrialsPrecision) {
  if (!CpuHasNativeBf16()) GTEST_SKIP() << "this CPU has no AVX512-BF16 or AMX";
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  TrainerOptions o = testing::SmallMlp(/*seed=*/2);
  o.hp.precision = "bf16";
  Trainer t(o, data);
  EXPECT_EQ(t.precision(), "bf16");
  const EpochMetrics m = t.TrainEpoch();
  EXPECT_GT(m.inference_ms, 0.0);
  EXPECT_TRUE(std::isfinite(m.inference_ms));
}

// One warm-up batch, then kInferenceRepeats passes over at most kInferenceSamples samples.
TEST(MeasureTest, TimesABoundedSliceOfTheSplitAfterAWarmUpBatch) {
  TensorSplit split;
  split.images = torch::rand({1500, 3});
  split.labels = torch::zeros({1500}, torch::kInt64);
  int64_t calls = 0, samples = 0;
  const double ms =
      InferenceMsPerSample(split, /*eval_batch=*/200, torch::kCPU, [&](const torch::Tensor& x) {
        EXPECT_FALSE(torch::GradMode::is_enabled());
        ++calls;
        samples += x.size(0);
      });
  // Batches of 200, 200 and 112 per pass.
  EXPECT_EQ(calls, 1 + 3 * kInferenceRepeats);
  EXPECT_EQ(samples, 200 + kInferenceSamples * kInferenceRepeats);
  EXPECT_GE(ms, 0.0);

  split.images = split.images.narrow(0, 0, 0);
  split.labels = split.labels.narrow(0, 0, 0);
  EXPECT_TRUE(std::isnan(InferenceMsPerSample(split, 200, torch::kCPU, [](auto&) {})));
}

}  // namespace measure_test
}  // namespace sift::worker

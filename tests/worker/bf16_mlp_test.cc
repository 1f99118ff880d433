// The MLP trained in bf16 on the CPU, where its layers run FusedLinearBf16 (where the CPU has
// AVX512-BF16; elsewhere these check the autocast layers): checkpoints resume bitwise, two
// threads repeat bitwise, and micro-batches accumulate fp32 gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/worker/test_util.h"
#include "worker/trainer/kernels/sgemm.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace bf16_mlp_test {

TrainerOptions Bf16Mlp() {
  TrainerOptions o = testing::SmallMlp(/*seed=*/7);
  o.hp.precision = "bf16";
  o.hp.dropout = 0.2;  // dropout on bf16 activations, from the trainer's generator
  return o;
}

// All parameters, flattened into one fp32 vector, in module order.
torch::Tensor Flat(Trainer& t) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : t.model().parameters()) {
    EXPECT_EQ(p.scalar_type(), torch::kFloat32);  // master weights stay fp32
    parts.push_back(p.detach().flatten());
  }
  return torch::cat(parts);
}

TEST(Bf16MlpTest, LearnsAndResumesBitwiseMidEpoch) {
  auto data = testing::SmallFashionMnist(/*train=*/512, /*val=*/64, /*test=*/64);
  TrainerOptions o = Bf16Mlp();
  o.hp.micro_batch = 32;
  testing::TempDir dir;
  Trainer straight(o, data);
  EXPECT_EQ(straight.precision(), "bf16");
  EpochMetrics first_epoch = straight.TrainEpoch(), last_straight = straight.TrainEpoch();
  EXPECT_LT(last_straight.train_loss, first_epoch.train_loss);

  {
    Trainer first(o, data);
    first.TrainEpoch();
    std::atomic<bool> stop{true};
    for (int i = 0; i < 2; ++i) first.TrainEpoch(&stop);
    first.SaveCheckpoint(dir / "ckpt");
  }
  Trainer resumed(o, data);
  resumed.LoadCheckpoint(dir / "ckpt");
  const EpochMetrics last_resumed = resumed.TrainEpoch();
  EXPECT_TRUE(torch::equal(Flat(straight), Flat(resumed)));
  EXPECT_EQ(last_straight.train_loss, last_resumed.train_loss);
  EXPECT_EQ(last_straight.val_loss, last_resumed.val_loss);
}

// Regression: with a layer or batch norm, the MLP's bf16 activations reached the norm, whose
// fp32 weight LibTorch's CPU kernel refused ("expected scalar type BFloat16 but found Float"):
// `precision: auto` on an AVX512-BF16 CPU failed every such trial.
TEST(Bf16MlpTest, NormsTrainOnBf16Activations) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  for (const char* norm : {"layer", "batch"}) {
    SCOPED_TRACE(norm);
    TrainerOptions o = Bf16Mlp();
    o.hp.norm = norm;
    o.hp.activation = "gelu";
    Trainer t(o, data);
    const EpochMetrics m = t.TrainEpoch();
    EXPECT_TRUE(std::isfinite(m.train_loss));
    EXPECT_TRUE(std::isfinite(m.val_loss));
  }
}

TEST(Bf16MlpTest, TwoThreadsRepeatBitwise) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  TrainerOptions o = Bf16Mlp();
  o.num_threads = 2;
  Trainer a(o, data), b(o, data);
  a.TrainEpoch();
  b.TrainEpoch();
  EXPECT_TRUE(torch::equal(Flat(a), Flat(b)));
}

// Four micro-batches of 16 against one batch of 64 for an epoch of Adam. FusedLinearBf16 rounds
// per element and row, so only the fp32 sums over rows (weight and bias gradients, summed in fp32
// across micro-batches) differ in order: measured 7.5e-9, held to fp32's 1e-5 (trainer_test).
// Autocast's layers round each micro-batch's weight gradients to bf16: 4e-3, held to 1e-2.
TEST(Bf16MlpTest, AccumulationStaysCloseToOneLargeBatch) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  TrainerOptions o = Bf16Mlp();
  o.hp.dropout = 0.0;
  TrainerOptions acc = o;
  acc.hp.micro_batch = 16;
  Trainer whole(o, data), accumulated(acc, data);
  whole.TrainEpoch();
  accumulated.TrainEpoch();
  const double bound = GemmBf16Available() ? 1e-5 : 1e-2;
  EXPECT_LT((Flat(whole) - Flat(accumulated)).abs().max().item<double>(), bound);
}

}  // namespace bf16_mlp_test
}  // namespace sift::worker

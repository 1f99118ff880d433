#include "worker/trainer/loss_scaler.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <sstream>

#include "worker/trainer/kernels/fused_optimizer.h"

namespace sift::worker {
namespace loss_scaler_test {

// A single parameter with SGD(lr=1): a step moves it by exactly minus its (unscaled) gradient.
struct Fixture {
  torch::Tensor w = torch::ones({4}, torch::requires_grad());
  torch::optim::SGD sgd{{w}, torch::optim::SGDOptions(/*lr=*/1.0)};

  // Backward through scaler.Scale(loss) for loss = sum(w * g): the true gradient is g.
  void Backward(GradScaler& scaler, const torch::Tensor& g) {
    sgd.zero_grad();
    scaler.Scale((w * g).sum()).backward();
  }
};

GradScalerOptions Options(int64_t growth_interval) {
  GradScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_interval = growth_interval;
  return o;
}

TEST(GradScalerTest, UnscalesBeforeStepping) {
  Fixture f;
  GradScaler scaler(Options(100));
  f.Backward(scaler, torch::full({4}, 0.5));
  EXPECT_TRUE(torch::allclose(f.w.grad(), torch::full({4}, 512.0)));  // scaled by 1024
  EXPECT_TRUE(scaler.Step(f.sgd));
  scaler.Update();
  EXPECT_TRUE(torch::equal(f.w.detach(), torch::full({4}, 0.5)));
  EXPECT_EQ(scaler.scale(), 1024.0);
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST(GradScalerTest, SkipsStepAndBacksOffOnInfOrNan) {
  for (float bad :
       {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Fixture f;
    GradScaler scaler(Options(100));
    f.Backward(scaler, torch::tensor({0.5f, bad, 0.5f, 0.5f}));
    EXPECT_FALSE(scaler.Step(f.sgd));
    scaler.Update();
    EXPECT_TRUE(torch::equal(f.w.detach(), torch::ones({4})));  // untouched
    EXPECT_EQ(scaler.scale(), 512.0);
    EXPECT_EQ(scaler.skipped_steps(), 1);
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
}

// Overflow caused by the scale itself: the loss is fine, loss * scale is not representable.
TEST(GradScalerTest, OverflowInHalfPrecisionBacksOffUntilItFits) {
  GradScalerOptions o = Options(1000);
  o.init_scale = 65536.0;
  GradScaler scaler(o);
  auto w = torch::ones({2}, torch::dtype(torch::kHalf).requires_grad(true));
  torch::optim::SGD sgd({w}, torch::optim::SGDOptions(1e-3));
  int skipped = 0;
  for (int i = 0; i < 10; ++i) {
    sgd.zero_grad();
    scaler.Scale((w * 8.0).sum()).backward();  // grad 8 * 65536 overflows fp16's 65504
    const bool stepped = scaler.Step(sgd);
    scaler.Update();
    if (stepped) break;
    ++skipped;
  }
  EXPECT_EQ(skipped, 4);  // 65536 -> 4096: 8 * 4096 = 32768 fits
  EXPECT_EQ(scaler.scale(), 4096.0);
}

TEST(GradScalerTest, GrowsAfterIntervalOfGoodSteps) {
  Fixture f;
  GradScaler scaler(Options(3));
  for (int i = 0; i < 7; ++i) {
    f.Backward(scaler, torch::full({4}, 1e-3));
    ASSERT_TRUE(scaler.Step(f.sgd));
    scaler.Update();
  }
  EXPECT_EQ(scaler.scale(), 4096.0);  // grew twice: after steps 3 and 6
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST(GradScalerTest, StateRoundTripsThroughArchive) {
  Fixture f;
  GradScaler scaler(Options(3));
  f.Backward(scaler, torch::tensor({1.0f, std::numeric_limits<float>::infinity(), 1.0f, 1.0f}));
  scaler.Step(f.sgd);
  scaler.Update();
  f.Backward(scaler, torch::full({4}, 1.0));
  scaler.Step(f.sgd);
  scaler.Update();
  torch::serialize::OutputArchive out;
  scaler.Save(out);
  std::stringstream s;
  out.save_to(s);
  torch::serialize::InputArchive in;
  in.load_from(s);
  GradScaler restored(Options(3));
  restored.Load(in);
  EXPECT_EQ(restored.scale(), 512.0);
  EXPECT_EQ(restored.growth_tracker(), 1);
  EXPECT_EQ(restored.skipped_steps(), 1);
}

// With Sift's own optimizer the scaler first offers the flag to its multi-tensor step (CUDA
// only); on the CPU that declines and the step is skipped on the host, counted the same way.
TEST(GradScalerTest, SkipsAFusedOptimizerStepAndCountsIt) {
  auto w = torch::ones({4}, torch::requires_grad());
  FusedOptimizerOptions o;
  o.kind = OptimizerKind::kSgd;
  o.lr = 1.0;
  o.momentum = 0.9;
  FusedOptimizer sgd({w}, o);
  EXPECT_FALSE(sgd.StepAll(std::nullopt));  // CPU: the per-parameter kernels
  GradScaler scaler(Options(100));
  scaler
      .Scale((w * torch::tensor({1.0f, std::numeric_limits<float>::infinity(), 1.0f, 1.0f})).sum())
      .backward();
  EXPECT_FALSE(scaler.Step(sgd));
  scaler.Update();
  EXPECT_TRUE(torch::equal(w.detach(), torch::ones({4})));
  sgd.ClearGrads();
  scaler.Scale((w * 0.5).sum()).backward();
  EXPECT_TRUE(scaler.Step(sgd));
  scaler.Update();
  EXPECT_TRUE(torch::allclose(w.detach(), torch::full({4}, 0.5)));  // 1 - 1.0 * 0.5
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_EQ(scaler.scale(), 512.0);
}

TEST(GradScalerTest, DisabledIsTransparent) {
  Fixture f;
  GradScalerOptions o;
  o.enabled = false;
  GradScaler scaler(o);
  f.Backward(scaler, torch::full({4}, 0.25));
  EXPECT_TRUE(torch::equal(f.w.grad(), torch::full({4}, 0.25)));
  EXPECT_TRUE(scaler.Step(f.sgd));
  scaler.Update();
  EXPECT_TRUE(torch::equal(f.w.detach(), torch::full({4}, 0.75)));
}

}  // namespace loss_scaler_test
}  // namespace sift::worker

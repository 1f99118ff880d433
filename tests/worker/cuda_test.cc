// The trainer on a CUDA device: compiled everywhere, skipped where no GPU is visible, run by
// scripts/gpu-check.sh on a GPU host (issue 15).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "tests/worker/test_util.h"
#include "worker/trainer/kernels/fused_optimizer.h"
#include "worker/trainer/kernels/multi_tensor_step.h"
#include "worker/trainer/loss_scaler.h"
#include "worker/trainer/micro_batch.h"
#include "worker/trainer/precision.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace cuda_test {

#define SKIP_WITHOUT_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

TrainerOptions CudaMlp(const std::string& precision) {
  TrainerOptions o = testing::SmallMlp(/*seed=*/7);
  o.device = "cuda";
  o.hp.precision = precision;
  return o;
}

TEST(CudaTest, AutoPrecisionFollowsTheComputeCapability) {
  SKIP_WITHOUT_CUDA();
  const auto cc = CudaCapability(0);
  ASSERT_TRUE(cc.has_value()) << "the driver's capability could not be read";
  Trainer t(CudaMlp("auto"), testing::SmallFashionMnist());
  EXPECT_EQ(t.device(), "cuda");
  EXPECT_EQ(t.precision(), cc->first >= 8 ? "bf16" : "fp16");
}

// The multi-tensor kernels take the steps the per-parameter tensor ops take (on the CPU the same
// formulas run in Sift's kernels), to float rounding.
TEST(CudaTest, MultiTensorStepMatchesTheCpuOptimizer) {
  SKIP_WITHOUT_CUDA();
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    if (!HasMultiTensorKernel(kind)) continue;
    FusedOptimizerOptions o;
    o.kind = kind;
    o.lr = 1e-2;
    o.weight_decay = 1e-2;
    o.momentum = 0.9;
    torch::manual_seed(3);
    auto cpu = torch::randn({257, 33}).requires_grad_(true);
    auto gpu = cpu.detach().to(torch::kCUDA).requires_grad_(true);
    FusedOptimizer on_cpu({cpu}, o), on_gpu({gpu}, o);
    for (int step = 0; step < 5; ++step) {
      const auto g = torch::randn({257, 33});
      cpu.mutable_grad() = g.clone();
      gpu.mutable_grad() = g.to(torch::kCUDA);
      on_cpu.step();
      ASSERT_TRUE(on_gpu.StepAll(std::nullopt));
    }
    const double err = (gpu.detach().cpu() - cpu.detach()).abs().max().item<double>();
    EXPECT_LT(err, 1e-5) << "kind " << static_cast<int>(kind);
  }
}

// fp16 with the scaler on the device: an overflowing step is skipped by the kernel without the
// host reading the flag, counted, and the scale backs off.
TEST(CudaTest, Fp16OverflowIsSkippedOnTheDevice) {
  SKIP_WITHOUT_CUDA();
  auto w = torch::ones({4}, torch::dtype(torch::kFloat32).device(torch::kCUDA).requires_grad(true));
  FusedOptimizerOptions o;
  o.kind = OptimizerKind::kAdam;
  o.lr = 0.1;
  FusedOptimizer adam({w}, o);
  GradScalerOptions so;
  so.init_scale = 1024.0;
  GradScaler scaler(so);
  const float inf = std::numeric_limits<float>::infinity();
  scaler.Scale((w * torch::tensor({1.0f, inf, 1.0f, 1.0f}, torch::kCUDA)).sum()).backward();
  scaler.Step(adam);
  scaler.Update();
  EXPECT_TRUE(torch::equal(w.detach().cpu(), torch::ones({4})));
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_EQ(scaler.scale(), 512.0);
  adam.ClearGrads();
  scaler.Scale(w.sum()).backward();
  scaler.Step(adam);
  scaler.Update();
  EXPECT_TRUE(w.detach().cpu().lt(1.0).all().item<bool>());  // this one stepped
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

// fp16 and bf16 train to about fp32's accuracy; the resident split and the multi-tensor step
// are in use (their figures are the table's).
TEST(CudaTest, MixedPrecisionLearnsLikeFp32) {
  SKIP_WITHOUT_CUDA();
  auto data = testing::SmallFashionMnist();
  double fp32 = 0;
  for (const char* precision : {"fp32", "bf16", "fp16"}) {
    Trainer t(CudaMlp(precision), data);
    EpochMetrics m;
    for (int e = 0; e < 3; ++e) m = t.TrainEpoch();
    EXPECT_GT(m.samples_per_second, 0.0);
    if (std::string(precision) == "fp32") fp32 = m.val_accuracy;
    EXPECT_GT(m.val_accuracy, fp32 - 0.03) << precision;
  }
}

// A checkpoint written on CUDA resumes on the CPU to the same next step (the step count that
// the multi-tensor path keeps on the device included).
TEST(CudaTest, CheckpointMovesToTheCpu) {
  SKIP_WITHOUT_CUDA();
  auto data = testing::SmallFashionMnist();
  TrainerOptions o = CudaMlp("fp32");
  Trainer gpu(o, data);
  gpu.TrainEpoch();
  testing::TempDir dir;
  gpu.SaveCheckpoint(dir / "e1.ckpt");
  o.device = "cpu";
  Trainer cpu(o, data);
  cpu.LoadCheckpoint(dir / "e1.ckpt");
  EXPECT_EQ(cpu.epoch(), 1);
  const EpochMetrics a = gpu.TrainEpoch(), b = cpu.TrainEpoch();
  EXPECT_NEAR(a.val_accuracy, b.val_accuracy, 0.02);
}

TEST(CudaTest, MicroBatchAutoMeasuresDeviceMemory) {
  SKIP_WITHOUT_CUDA();
  common::HParams hp = CudaMlp("fp32").hp;
  hp.micro_batch = common::kAutoMicroBatch;
  const MicroBatchChoice c = ChooseMicroBatch(hp, "cuda", /*limit_bytes=*/0);
#ifdef SIFT_TORCH_CUDA
  EXPECT_GT(c.sample_bytes, 1) << c.Describe();  // measured, not the placeholder
  EXPECT_GT(c.limit_bytes, int64_t{1} << 30) << c.Describe();
#endif
  EXPECT_EQ(c.micro_batch, hp.batch_size) << c.Describe();
}

}  // namespace cuda_test
}  // namespace sift::worker

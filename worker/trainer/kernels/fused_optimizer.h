// SGD (momentum, Nesterov, weight decay; dampening 0), Adam and AdamW with torch::optim's
// arithmetic, but one pass over each parameter per step instead of one per tensor op: on the
// benchmark MLP torch::optim::Adam's six ops over 534k parameters took a quarter of the step.
// CPU float32 parameters go through optimizer_kernels.h, split across the intra-op threads;
// CUDA float32 parameters through LibTorch's fused multi-tensor kernels where this LibTorch has
// them (multi_tensor_step.h); anything else runs the same formulas as tensor ops.
//
// Results match torch::optim to rounding (tests/worker/fused_optimizer_test.cc states the
// tolerance) and are bitwise repeatable for any thread count. The learning rate is read from the
// param group at every step, so schedules set it as they do for torch::optim.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <vector>

namespace sift::worker {

enum class OptimizerKind { kSgd, kAdam, kAdamW };

struct FusedOptimizerOptions : public torch::optim::OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 1e-3;
  double weight_decay = 0.0;  // SGD, Adam: L2 on the gradient; AdamW: decoupled
  double momentum = 0.0;      // SGD
  bool nesterov = false;      // SGD
  double beta1 = 0.9;         // Adam(W)
  double beta2 = 0.999;
  double eps = 1e-8;

  std::unique_ptr<torch::optim::OptimizerOptions> clone() const override;
  double get_lr() const override { return lr; }
  void set_lr(const double value) override { lr = value; }
};

class FusedOptimizer : public torch::optim::Optimizer {
 public:
  FusedOptimizer(std::vector<torch::Tensor> params, const FusedOptimizerOptions& options);

  torch::Tensor step(LossClosure closure = nullptr) override;

  // One multi-tensor step (multi_tensor_step.h) when every parameter is a CUDA float32 tensor
  // with a gradient and this LibTorch has the kernel; found_inf: skip on the device after an
  // fp16 overflow, without a host sync. Returns false, having done nothing, otherwise.
  bool StepAll(const std::optional<torch::Tensor>& found_inf);

  // Drops the gradients (PyTorch's set_to_none): the next backward writes them directly
  // instead of adding into zero-filled tensors.
  void ClearGrads();

  // Per parameter: its step count and state tensors. load() also reads what torch::optim's
  // SGD/Adam/AdamW save() wrote, so checkpoints from before this optimizer still resume.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  struct Slot {
    int64_t step = 0;
    torch::Tensor first;   // Adam(W): exp_avg; SGD: momentum_buffer
    torch::Tensor second;  // Adam(W): exp_avg_sq
  };

  const std::vector<torch::Tensor>& Params() const;
  const FusedOptimizerOptions& Options() const;
  void StepOne(const torch::Tensor& p, const torch::Tensor& grad, Slot& slot);
  void LoadTorchOptimState(torch::serialize::InputArchive& archive);

  std::vector<Slot> slots_;  // one per parameter, in order
  // The multi-tensor path's step count (float32, on the device): slots_[i].step is behind it
  // until save() reads it back.
  torch::Tensor device_step_;
};

}  // namespace sift::worker

// Dynamic loss scaling for fp16 training (Micikevicius et al., ICLR 2018), as torch.cuda.amp's
// GradScaler does it: multiply the loss by S before backward, divide the gradients by S, skip the
// optimizer step when any gradient is inf/NaN and halve S, double S after `growth_interval`
// consecutive good steps.
//
// The scale, the overflow flag and the counters live on the gradients' device, and the
// bookkeeping is tensor arithmetic there (on CUDA LibTorch's fused AMP kernels): with a
// FusedOptimizer whose multi-tensor kernel takes the flag (CUDA), a step needs no host sync.
// Elsewhere Step() reads the flag, which on the CPU costs nothing.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace sift::worker {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // disabled: Scale() is the identity and Step() always steps
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // loss * scale (the identity when disabled).
  torch::Tensor Scale(const torch::Tensor& loss);
  // Divides the gradients of `params` by the scale in place and records whether any is inf/NaN.
  // Called by Step() if not called before it (call it first to clip gradients).
  void Unscale(const std::vector<torch::Tensor>& params);
  // Unscales if needed, then steps `optimizer` unless a gradient was inf/NaN. Returns whether
  // it stepped; true also when the decision stayed on the device (a FusedOptimizer's
  // multi-tensor step skips by itself: skipped_steps() counts it).
  bool Step(torch::optim::Optimizer& optimizer);
  // Adjusts the scale after a step: back off on overflow, grow after growth_interval good steps.
  void Update();

  // Read from the device (a sync on CUDA): for reports and checkpoints, not every step.
  double scale() const;
  bool enabled() const { return options_.enabled; }
  int64_t growth_tracker() const;
  int64_t skipped_steps() const;

  void Save(torch::serialize::OutputArchive& archive) const;
  void Load(torch::serialize::InputArchive& archive);

 private:
  void Place(const torch::Device& device);  // moves the state to the gradients' device

  GradScalerOptions options_;
  // float32 [1] scale, int32 [1] consecutive good steps, float32 [1] overflow flag of the
  // current step (1 or 0), int64 [] skipped steps in total: the layouts the AMP kernels take.
  torch::Tensor scale_, growth_tracker_, found_inf_, skipped_;
  bool unscaled_ = false;  // Unscale() ran for the current step
};

}  // namespace sift::worker

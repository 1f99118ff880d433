// Dynamic loss scaling for fp16 training (Micikevicius et al., ICLR 2018), as torch.cuda.amp's
// GradScaler does it: multiply the loss by S before backward, divide the gradients by S, skip the
// optimizer step when any gradient is inf/NaN and halve S, double S after `growth_interval`
// consecutive good steps. Device-agnostic: works on whatever device the gradients live on.
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
  torch::Tensor Scale(const torch::Tensor& loss) const;
  // Divides the gradients of `params` by the scale in place and records whether any is inf/NaN.
  // Called by Step() if not called before it (call it first to clip gradients).
  void Unscale(const std::vector<torch::Tensor>& params);
  // Unscales if needed, then steps `optimizer` unless a gradient was inf/NaN. Returns true when
  // the optimizer stepped.
  bool Step(torch::optim::Optimizer& optimizer);
  // Adjusts the scale after a step: back off on overflow, grow after growth_interval good steps.
  void Update();

  double scale() const { return scale_; }
  bool enabled() const { return options_.enabled; }
  int64_t growth_tracker() const { return growth_tracker_; }
  int64_t skipped_steps() const { return skipped_steps_; }

  void Save(torch::serialize::OutputArchive& archive) const;
  void Load(torch::serialize::InputArchive& archive);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;  // consecutive good steps since the last change of scale
  int64_t skipped_steps_ = 0;   // total
  bool unscaled_ = false;       // Unscale() ran for the current step
  bool found_inf_ = false;      // ... and saw an inf/NaN
};

}  // namespace sift::worker

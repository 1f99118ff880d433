#include "worker/trainer/loss_scaler.h"

#include <optional>

#include "worker/trainer/kernels/fused_optimizer.h"

namespace sift::worker {

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  scale_ = torch::full({1}, options.init_scale, torch::kFloat32);
  growth_tracker_ = torch::zeros({1}, torch::kInt32);
  found_inf_ = torch::zeros({1}, torch::kFloat32);
  skipped_ = torch::zeros({}, torch::kInt64);
}

void GradScaler::Place(const torch::Device& device) {
  if (scale_.device() == device) return;
  scale_ = scale_.to(device);
  growth_tracker_ = growth_tracker_.to(device);
  found_inf_ = found_inf_.to(device);
  skipped_ = skipped_.to(device);
}

torch::Tensor GradScaler::Scale(const torch::Tensor& loss) {
  if (!options_.enabled) return loss;
  Place(loss.device());
  return loss * scale_.squeeze(0);
}

void GradScaler::Unscale(const std::vector<torch::Tensor>& params) {
  if (!options_.enabled || unscaled_) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  found_inf_.zero_();
  if (!grads.empty()) {
    Place(grads.front().device());
    // In double, then float, as PyTorch's GradScaler: 1/S stays exact for powers of two.
    const auto inv_scale = scale_.to(torch::kFloat64).reciprocal().to(torch::kFloat32);
    if (grads.front().is_cuda()) {
      // One fused kernel over all gradients; no host sync.
      at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
    } else {  // LibTorch 1.13 has this kernel for CUDA only: the same as tensor ops
      for (auto& g : grads) {
        found_inf_.copy_(
            torch::maximum(found_inf_, g.isfinite().logical_not().any().to(torch::kFloat32)));
        g.mul_(inv_scale);
      }
    }
  }
  unscaled_ = true;
}

bool GradScaler::Step(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  if (!unscaled_) {
    std::vector<torch::Tensor> params;
    for (auto& group : optimizer.param_groups()) {
      for (auto& p : group.params()) params.push_back(p);
    }
    Unscale(params);
  }
  skipped_.add_(found_inf_.squeeze(0).to(torch::kInt64));
  if (auto* fused = dynamic_cast<FusedOptimizer*>(&optimizer)) {
    if (fused->StepAll(found_inf_.squeeze(0))) return true;  // skips on the device
  }
  if (found_inf_.item<float>() != 0.0f) return false;  // the one host read of this path
  optimizer.step();
  return true;
}

void GradScaler::Update() {
  if (!options_.enabled) return;
  torch::NoGradGuard no_grad;
  if (scale_.is_cuda()) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                           options_.backoff_factor, options_.growth_interval);
  } else {  // as _amp_update_scale_ (CUDA only in LibTorch 1.13), as tensor ops
    const auto bad = found_inf_.gt(0);
    const auto good_steps =
        torch::where(bad, torch::zeros_like(growth_tracker_), growth_tracker_ + 1);
    const auto grow = good_steps.ge(options_.growth_interval);
    scale_.copy_(torch::where(bad, scale_ * options_.backoff_factor,
                              torch::where(grow, scale_ * options_.growth_factor, scale_)));
    growth_tracker_.copy_(torch::where(grow, torch::zeros_like(good_steps), good_steps));
  }
  unscaled_ = false;
}

double GradScaler::scale() const { return scale_.item<double>(); }
int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int64_t>(); }
int64_t GradScaler::skipped_steps() const { return skipped_.item<int64_t>(); }

void GradScaler::Save(torch::serialize::OutputArchive& archive) const {
  archive.write("scale", torch::tensor(scale(), torch::kFloat64));
  archive.write("growth_tracker", torch::tensor(growth_tracker(), torch::kInt64));
  archive.write("skipped_steps", torch::tensor(skipped_steps(), torch::kInt64));
}

void GradScaler::Load(torch::serialize::InputArchive& archive) {
  // A fresh tensor per read: reading into a defined tensor reinterprets its storage.
  auto read = [&archive](const char* key) {
    torch::Tensor t;
    archive.read(key, t);
    return t.to(torch::kCPU);
  };
  const torch::Device device = scale_.device();
  scale_ = torch::full({1}, read("scale").item<double>(), torch::kFloat32).to(device);
  growth_tracker_ =
      torch::full({1}, read("growth_tracker").item<int64_t>(), torch::kInt32).to(device);
  skipped_ = torch::full({}, read("skipped_steps").item<int64_t>(), torch::kInt64).to(device);
  found_inf_ = torch::zeros({1}, torch::dtype(torch::kFloat32).device(device));
  unscaled_ = false;
}

}  // namespace sift::worker

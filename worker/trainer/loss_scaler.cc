#include "worker/trainer/loss_scaler.h"

namespace sift::worker {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {}

torch::Tensor GradScaler::Scale(const torch::Tensor& loss) const {
  return options_.enabled ? loss * scale_ : loss;
}

void GradScaler::Unscale(const std::vector<torch::Tensor>& params) {
  if (!options_.enabled || unscaled_) return;
  torch::NoGradGuard no_grad;
  // One flag tensor on the gradients' device, read back once: a single sync per step.
  torch::Tensor any_bad;
  const double inv_scale = 1.0 / scale_;
  for (const auto& p : params) {
    auto g = p.grad();
    if (!g.defined()) continue;
    g.mul_(inv_scale);
    auto bad = g.isfinite().logical_not().any();
    any_bad = any_bad.defined() ? any_bad.logical_or_(bad) : bad;
  }
  found_inf_ = any_bad.defined() && any_bad.item<bool>();
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
  if (found_inf_) {
    ++skipped_steps_;
    return false;
  }
  optimizer.step();
  return true;
}

void GradScaler::Update() {
  if (!options_.enabled) return;
  if (found_inf_) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
  unscaled_ = false;
  found_inf_ = false;
}

void GradScaler::Save(torch::serialize::OutputArchive& archive) const {
  archive.write("scale", torch::tensor(scale_, torch::kFloat64));
  archive.write("growth_tracker", torch::tensor(growth_tracker_, torch::kInt64));
  archive.write("skipped_steps", torch::tensor(skipped_steps_, torch::kInt64));
}

void GradScaler::Load(torch::serialize::InputArchive& archive) {
  // A fresh tensor per read: reading into a defined tensor reinterprets its storage.
  auto read = [&archive](const char* key) {
    torch::Tensor t;
    archive.read(key, t);
    return t;
  };
  scale_ = read("scale").item<double>();
  growth_tracker_ = read("growth_tracker").item<int64_t>();
  skipped_steps_ = read("skipped_steps").item<int64_t>();
  unscaled_ = false;
  found_inf_ = false;
}

}  // namespace sift::worker

#include "worker/trainer/kernels/fused_optimizer.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "worker/trainer/kernels/multi_tensor_step.h"
#include "worker/trainer/kernels/optimizer_kernels.h"
#include "worker/trainer/kernels/vector_loop.h"

namespace sift::worker {
namespace {

// Elements per thread chunk (vector_loop.h): below it a parameter is updated on one thread (a
// bias, a norm).
constexpr int64_t kGrain = kGrainElements;
constexpr int64_t kFormatVersion = 1;

// The kernels walk raw memory, so the gradient must be laid out as the parameter is. Autograd's
// accumulation keeps it so (layout contract); copy when it did not.
torch::Tensor LikeParam(const torch::Tensor& grad, const torch::Tensor& p) {
  if (grad.strides() == p.strides() && grad.is_non_overlapping_and_dense()) return grad;
  return torch::empty_like(p).copy_(grad);
}

bool Fusable(const torch::Tensor& p) {
  return p.is_cpu() && p.scalar_type() == torch::kFloat32 && p.is_non_overlapping_and_dense();
}

std::string Key(const char* name, size_t i) { return std::string(name) + "." + std::to_string(i); }

// torch::optim's key for a parameter's state: the TensorImpl's address printed as a string on
// LibTorch 1.x (c10::guts::to_string, gone in 2.x), the address itself on 2.x. Chosen by the
// map's key type rather than a version number, so whichever release changed it, both build.
template <typename Optim>
auto StateKey(Optim& optim, const torch::Tensor& p) {
  using Key = typename std::decay_t<decltype(optim.state())>::key_type;
  void* impl = p.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;  // what c10::guts::to_string wrote
    s << impl;
    return s.str();
  } else {
    return static_cast<Key>(impl);
  }
}

// Runs kernel(begin, count) over [0, n) in chunks on the intra-op threads.
template <typename F>
void ParallelChunks(int64_t n, F kernel) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) { kernel(begin, end - begin); });
}

}  // namespace

std::unique_ptr<torch::optim::OptimizerOptions> FusedOptimizerOptions::clone() const {
  return std::make_unique<FusedOptimizerOptions>(*this);
}

FusedOptimizer::FusedOptimizer(std::vector<torch::Tensor> params,
                               const FusedOptimizerOptions& options)
    : torch::optim::Optimizer(std::move(params), options.clone()) {
  if (options.kind == OptimizerKind::kSgd && options.nesterov && options.momentum <= 0.0) {
    throw std::invalid_argument("nesterov: needs momentum > 0");
  }
  slots_.resize(Params().size());
}

// One group, built by the constructor (torch::optim's parameters() warns it is deprecated).
const std::vector<torch::Tensor>& FusedOptimizer::Params() const {
  return param_groups_.front().params();
}

const FusedOptimizerOptions& FusedOptimizer::Options() const {
  // add_param_group cloned the defaults into the group: schedules set the rate there.
  return static_cast<const FusedOptimizerOptions&>(param_groups_.front().options());
}

torch::Tensor FusedOptimizer::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  if (StepAll(std::nullopt)) return loss;
  if (device_step_.defined()) {
    // Leaving the multi-tensor path (a parameter without a gradient this step): the per-parameter
    // steps continue from the count the device kept.
    const int64_t count = std::llround(device_step_.item<double>());
    if (Options().kind != OptimizerKind::kSgd) {
      for (auto& slot : slots_) slot.step = count;
    }
    device_step_ = torch::Tensor();
  }
  const auto& params = Params();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (!p.grad().defined()) continue;  // as torch::optim: no gradient, no step
    StepOne(p, p.grad(), slots_[i]);
  }
  return loss;
}

bool FusedOptimizer::StepAll(const std::optional<torch::Tensor>& found_inf) {
  const FusedOptimizerOptions& o = Options();
  const auto& params = Params();
  if (params.empty() || !HasMultiTensorKernel(o.kind)) return false;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (!p.is_cuda() || p.scalar_type() != torch::kFloat32 || !p.grad().defined() ||
        slots_[i].step != slots_[0].step) {
      return false;
    }
  }
  torch::NoGradGuard no_grad;
  MultiTensorLists l;
  const bool adam = o.kind != OptimizerKind::kSgd;
  for (size_t i = 0; i < params.size(); ++i) {
    Slot& slot = slots_[i];
    // Zeros, also for SGD's buffers: with dampening 0, momentum * 0 + g is the first step's
    // "buffer = g", so a first step skipped on overflow leaves nothing half-made.
    if (!slot.first.defined() && (adam || o.momentum != 0.0)) {
      slot.first = torch::zeros_like(params[i], at::MemoryFormat::Preserve);
    }
    if (adam && !slot.second.defined()) {
      slot.second = torch::zeros_like(params[i], at::MemoryFormat::Preserve);
    }
    l.params.push_back(params[i]);
    l.grads.push_back(params[i].grad());
    if (slot.first.defined()) l.first.push_back(slot.first);
    if (slot.second.defined()) l.second.push_back(slot.second);
  }
  if (!device_step_.defined()) {
    device_step_ = torch::full({}, static_cast<double>(slots_[0].step),
                               torch::dtype(torch::kFloat32).device(params[0].device()));
  }
  l.step = device_step_;
  MultiTensorStep(o, l, found_inf);
  if (!adam) {
    // SGD keeps no count: "has a buffer" is all the state says (1 once it has stepped).
    for (auto& slot : slots_) slot.step = 1;
  }
  return true;
}

void FusedOptimizer::StepOne(const torch::Tensor& p, const torch::Tensor& grad, Slot& slot) {
  const FusedOptimizerOptions& o = Options();
  const int64_t n = p.numel();
  ++slot.step;
  if (o.kind == OptimizerKind::kSgd) {
    SgdStep s;
    s.neg_lr = static_cast<float>(-o.lr);
    s.momentum = static_cast<float>(o.momentum);
    s.weight_decay = static_cast<float>(o.weight_decay);
    s.nesterov = o.nesterov;
    s.first = o.momentum != 0.0 && !slot.first.defined();
    if (s.first) slot.first = torch::empty_like(p);
    if (!Fusable(p)) {  // the same formulas as tensor ops
      auto d = o.weight_decay != 0.0 ? grad.add(p, o.weight_decay) : grad;
      if (o.momentum != 0.0) {
        if (s.first) {
          slot.first.copy_(d);
        } else {
          slot.first.mul_(o.momentum).add_(d);
        }
        d = o.nesterov ? d.add(slot.first, o.momentum) : slot.first;
      }
      p.add_(d, -o.lr);
      return;
    }
    const auto g = LikeParam(grad, p);
    float* pp = p.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    float* bp = slot.first.defined() ? slot.first.data_ptr<float>() : nullptr;
    ParallelChunks(n, [&](int64_t begin, int64_t count) {
      SgdUpdate(pp + begin, gp + begin, bp ? bp + begin : nullptr, count, s);
    });
    p.unsafeGetTensorImpl()->bump_version();  // raw writes: tell autograd, as in-place ops do
    return;
  }

  // Adam and AdamW, with torch::optim's bias corrections and eps outside the square root.
  if (!slot.first.defined()) {
    slot.first = torch::zeros_like(p, at::MemoryFormat::Preserve);
    slot.second = torch::zeros_like(p, at::MemoryFormat::Preserve);
  }
  const double bias_correction1 = 1.0 - std::pow(o.beta1, static_cast<double>(slot.step));
  const double bias_correction2 = 1.0 - std::pow(o.beta2, static_cast<double>(slot.step));
  const bool decoupled = o.kind == OptimizerKind::kAdamW;
  AdamStep s;
  s.beta1 = static_cast<float>(o.beta1);
  s.one_minus_beta1 = static_cast<float>(1.0 - o.beta1);
  s.beta2 = static_cast<float>(o.beta2);
  s.one_minus_beta2 = static_cast<float>(1.0 - o.beta2);
  s.bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  s.eps = static_cast<float>(o.eps);
  s.neg_step_size = static_cast<float>(-o.lr / bias_correction1);
  s.weight_decay = decoupled ? 0.0f : static_cast<float>(o.weight_decay);
  s.decay_factor = decoupled ? static_cast<float>(1.0 - o.lr * o.weight_decay) : 1.0f;
  if (!Fusable(p)) {
    auto g = grad;
    if (decoupled && o.weight_decay != 0.0) p.mul_(1.0 - o.lr * o.weight_decay);
    if (!decoupled && o.weight_decay != 0.0) g = g.add(p, o.weight_decay);
    slot.first.mul_(o.beta1).add_(g, 1.0 - o.beta1);
    slot.second.mul_(o.beta2).addcmul_(g, g, 1.0 - o.beta2);
    auto denom = (slot.second.sqrt() / std::sqrt(bias_correction2)).add_(o.eps);
    p.addcdiv_(slot.first, denom, -o.lr / bias_correction1);
    return;
  }
  const auto g = LikeParam(grad, p);
  float* pp = p.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  float* mp = slot.first.data_ptr<float>();
  float* vp = slot.second.data_ptr<float>();
  ParallelChunks(n, [&](int64_t begin, int64_t count) {
    AdamUpdate(pp + begin, gp + begin, mp + begin, vp + begin, count, s);
  });
  p.unsafeGetTensorImpl()->bump_version();
}

void FusedOptimizer::ClearGrads() {
  for (auto& p : Params()) p.mutable_grad().reset();
}

void FusedOptimizer::save(torch::serialize::OutputArchive& archive) const {
  archive.write("fused_optimizer_version", c10::IValue(kFormatVersion));
  // The multi-tensor path counts Adam's steps on the device (one read per checkpoint).
  const bool on_device = device_step_.defined() && Options().kind != OptimizerKind::kSgd;
  const int64_t device_step = on_device ? std::llround(device_step_.item<double>()) : 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    archive.write(Key("step", i), c10::IValue(on_device ? device_step : slots_[i].step));
    if (slots_[i].first.defined()) archive.write(Key("first", i), slots_[i].first);
    if (slots_[i].second.defined()) archive.write(Key("second", i), slots_[i].second);
  }
}

void FusedOptimizer::load(torch::serialize::InputArchive& archive) {
  c10::IValue version;
  if (!archive.try_read("fused_optimizer_version", version)) {
    LoadTorchOptimState(archive);
    return;
  }
  TORCH_CHECK(version.toInt() == kFormatVersion, "optimizer state: unknown version ",
              version.toInt());
  std::vector<Slot> loaded(slots_.size());
  for (size_t i = 0; i < loaded.size(); ++i) {
    c10::IValue step;
    archive.read(Key("step", i), step);
    loaded[i].step = step.toInt();
    // Preserve the parameter's layout (channels_last) whatever the archive stored.
    torch::Tensor t;
    if (archive.try_read(Key("first", i), t)) {
      loaded[i].first = torch::empty_like(Params()[i]).copy_(t);
    }
    if (archive.try_read(Key("second", i), t)) {
      loaded[i].second = torch::empty_like(Params()[i]).copy_(t);
    }
  }
  slots_ = std::move(loaded);
  device_step_ = torch::Tensor();  // remade from the loaded counts at the next step
}

// Checkpoints written by torch::optim::SGD/Adam/AdamW: let that class parse its own format, then
// take over its per-parameter state.
void FusedOptimizer::LoadTorchOptimState(torch::serialize::InputArchive& archive) {
  const FusedOptimizerOptions& o = Options();
  const std::vector<torch::Tensor> params = Params();
  std::vector<Slot> loaded(params.size());
  // For each parameter torch::optim has state for: (index, its state object).
  auto for_each_state = [&params](auto& optim, auto take) {
    for (size_t i = 0; i < params.size(); ++i) {
      auto it = optim.state().find(StateKey(optim, params[i]));
      if (it != optim.state().end()) take(i, *it->second);
    }
  };
  auto like = [&params](size_t i, const torch::Tensor& t) {
    return torch::empty_like(params[i]).copy_(t);
  };
  if (o.kind == OptimizerKind::kSgd) {
    torch::optim::SGD sgd(params, torch::optim::SGDOptions(o.lr).momentum(o.momentum));
    sgd.load(archive);
    for_each_state(sgd, [&](size_t i, torch::optim::OptimizerParamState& base) {
      auto& st = static_cast<torch::optim::SGDParamState&>(base);
      loaded[i].first = like(i, st.momentum_buffer());
      loaded[i].step = 1;  // SGD keeps no count; only "has a buffer" matters
    });
  } else if (o.kind == OptimizerKind::kAdam) {
    torch::optim::Adam adam(params, torch::optim::AdamOptions(o.lr));
    adam.load(archive);
    for_each_state(adam, [&](size_t i, torch::optim::OptimizerParamState& base) {
      auto& st = static_cast<torch::optim::AdamParamState&>(base);
      loaded[i] = {st.step(), like(i, st.exp_avg()), like(i, st.exp_avg_sq())};
    });
  } else {
    torch::optim::AdamW adamw(params, torch::optim::AdamWOptions(o.lr));
    adamw.load(archive);
    for_each_state(adamw, [&](size_t i, torch::optim::OptimizerParamState& base) {
      auto& st = static_cast<torch::optim::AdamWParamState&>(base);
      loaded[i] = {st.step(), like(i, st.exp_avg()), like(i, st.exp_avg_sq())};
    });
  }
  slots_ = std::move(loaded);
  device_step_ = torch::Tensor();
}

}  // namespace sift::worker

#include "worker/trainer/torchscript_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "common/hparams/model_path.h"

namespace sift::worker {
namespace {

using search::ParamValue;

void Mirror(const torch::jit::Module& from, torch::nn::Module& to) {
  for (const auto& p : from.named_parameters(/*recurse=*/false)) {
    to.register_parameter(p.name, p.value, p.value.requires_grad());
  }
  for (const auto& b : from.named_buffers(/*recurse=*/false)) to.register_buffer(b.name, b.value);
  for (const auto& c : from.named_children()) {
    auto child = std::make_shared<torch::nn::Module>(c.name);
    Mirror(c.value, *child);
    to.register_module(c.name, child);
  }
}

// The attributes a search space may set: plain values, not parameters, buffers or submodules.
std::string SettableAttributes(const torch::jit::Module& m) {
  const auto& type = *m.type();
  std::string out;
  for (size_t i = 0; i < type.numAttributes(); ++i) {
    const auto& name = type.getAttributeName(i);
    const auto kind = type.getAttribute(i)->kind();
    if (type.is_parameter(i) || type.is_buffer(i) || name == "training") continue;
    if (kind != c10::TypeKind::FloatType && kind != c10::TypeKind::IntType &&
        kind != c10::TypeKind::BoolType && kind != c10::TypeKind::StringType) {
      continue;
    }
    out += (out.empty() ? "" : ", ") + name + " (" + type.getAttribute(i)->str() + ")";
  }
  return out.empty() ? "none" : out;
}

// The value as the attribute's type takes it; "" or the problem.
std::string ToIValue(const c10::TypePtr& type, const ParamValue& v, c10::IValue* out) {
  double d = 0;
  const bool numeric = search::AsDouble(v, &d);
  switch (type->kind()) {
    case c10::TypeKind::FloatType:
      if (!numeric) return "takes a float";
      *out = d;
      return "";
    case c10::TypeKind::IntType:
      if (!numeric || d != std::floor(d)) return "takes an int";
      *out = static_cast<int64_t>(d);
      return "";
    case c10::TypeKind::BoolType: {
      const std::string s = search::ToString(v);
      if (s == "true" || s == "1") return *out = true, "";
      if (s == "false" || s == "0") return *out = false, "";
      return "takes a bool (true or false)";
    }
    case c10::TypeKind::StringType:
      *out = search::ToString(v);
      return "";
    default:
      return "is a " + type->str() + "; only float, int, bool and str attributes can be set";
  }
}

void SetAttribute(torch::jit::Module& m, const std::string& path, const std::string& name,
                  const ParamValue& value) {
  const auto& type = *m.type();
  const auto slot = type.findAttributeSlot(name);
  const auto fail = [&](const std::string& problem) {
    throw std::invalid_argument(name + ": " + problem + " (module " + path +
                                "; settable attributes: " + SettableAttributes(m) + ")");
  };
  if (!slot) fail("not a trainer setting nor an attribute of the module");
  if (type.is_parameter(*slot) || type.is_buffer(*slot)) fail("is a tensor of the module");
  if (type.getAttribute(*slot)->cast<c10::ClassType>()) fail("is a submodule of the module");
  c10::IValue v;
  if (std::string p = ToIValue(type.getAttribute(*slot), value, &v); !p.empty()) {
    fail("'" + search::ToString(value) + "' does not fit: the attribute " + p);
  }
  m.setattr(name, v);
}

// TorchScript's dropout draws from the default CPU generator: for one forward pass it gets the
// trainer's generator state and hands it back after, so a checkpoint holds the module's
// randomness too and a resumed run repeats the uninterrupted one bitwise.
class LentGlobalGenerator {
 public:
  explicit LentGlobalGenerator(const c10::optional<at::Generator>& own) : own_(own) {
    if (!own_) return;
    at::Generator global = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(global.mutex());
    saved_ = global.get_state();
    std::lock_guard<std::mutex> own_lock(own_->mutex());
    global.set_state(own_->get_state());
  }
  ~LentGlobalGenerator() {
    if (!own_) return;
    at::Generator global = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(global.mutex());
    std::lock_guard<std::mutex> own_lock(own_->mutex());
    own_->set_state(global.get_state());
    global.set_state(saved_);
  }
  LentGlobalGenerator(const LentGlobalGenerator&) = delete;
  LentGlobalGenerator& operator=(const LentGlobalGenerator&) = delete;

 private:
  c10::optional<at::Generator> own_;
  at::Tensor saved_;
};

}  // namespace

TorchScriptNet::TorchScriptNet(torch::jit::Module module, std::string path, int64_t outputs)
    : module_(std::move(module)), path_(std::move(path)), outputs_(outputs) {
  Mirror(module_, *this);
}

torch::Tensor TorchScriptNet::forward(torch::Tensor x) {
  LentGlobalGenerator lent(generator());
  // The graph executor's optimisations (profiled specialisation, symbolic autodiff) would change
  // the arithmetic after the first few calls, and a resumed run calls a fresh module: plain
  // interpretation keeps resumed and uninterrupted runs bitwise equal.
  torch::jit::GraphOptimizerEnabledGuard no_optimizer(false);
  const c10::IValue out = module_.forward({x});
  if (!out.isTensor()) {
    throw std::invalid_argument("model " + path_ + ": forward returned a " + out.type()->str() +
                                ", not a tensor");
  }
  torch::Tensor y = out.toTensor();
  if (y.dim() == 1 && outputs_ == 1) y = y.unsqueeze(1);
  if (y.dim() != 2 || y.size(0) != x.size(0) || y.size(1) != outputs_) {
    throw std::invalid_argument(
        "model " + path_ + ": forward returned shape " + c10::str(y.sizes()) + " for a batch of " +
        std::to_string(x.size(0)) + "; the data needs [batch, " + std::to_string(outputs_) + "]");
  }
  return y;
}

void TorchScriptNet::train(bool on) {
  module_.train(on);
  torch::nn::Module::train(on);
}

std::shared_ptr<Net> MakeTorchScriptModel(const common::HParams& hp, int64_t outputs) {
  std::string path;
  if (std::string p = common::FillPath(hp.path, hp.attributes, &path); !p.empty()) {
    throw std::invalid_argument(p);
  }
  std::string problem;
  const auto in_path = common::PathParamNames(hp.path, &problem);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::invalid_argument("path: " + path + " is not a file (model: torchscript)");
  }
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    throw std::invalid_argument("path: cannot load TorchScript module " + path + ": " +
                                e.what_without_backtrace());
  }
  for (const auto& [name, value] : hp.attributes) {
    if (std::find(in_path.begin(), in_path.end(), name) != in_path.end()) continue;
    SetAttribute(module, path, name, value);
  }
  module.train();
  return std::make_shared<TorchScriptNet>(std::move(module), path, outputs);
}

}  // namespace sift::worker

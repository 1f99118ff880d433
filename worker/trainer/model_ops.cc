#include "worker/trainer/model_ops.h"

#include <sstream>
#include <stdexcept>

namespace sift::worker {
namespace {

std::string Exact(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

}  // namespace

torch::Tensor Activate(torch::Tensor x, const std::string& kind) {
  if (kind == "relu") return x.relu_();
  if (kind == "gelu") return torch::gelu(x);
  if (kind == "silu") return torch::silu(x);
  if (kind == "tanh") return torch::tanh(x);
  throw std::invalid_argument("activation: unknown '" + kind + "'");
}

std::string ScriptActivation(const std::string& kind, const std::string& x) {
  if (kind == "relu" || kind == "gelu" || kind == "silu" || kind == "tanh") {
    return "torch." + kind + "(" + x + ")";
  }
  throw std::invalid_argument("activation: unknown '" + kind + "'");
}

std::string ScriptLinear(const std::string& name, const std::string& x) {
  return "torch.linear(" + x + ", self." + name + ".weight, self." + name + ".bias)";
}

std::string ScriptBatchNorm(const std::string& name, const std::string& x, double eps) {
  const std::string s = "self." + name + ".";
  return "torch.batch_norm(" + x + ", " + s + "weight, " + s + "bias, " + s + "running_mean, " + s +
         "running_var, False, 0.0, " + Exact(eps) + ", False)";
}

std::string ScriptLayerNorm(const std::string& name, const std::string& x, int64_t width,
                            double eps) {
  const std::string s = "self." + name + ".";
  return "torch.layer_norm(" + x + ", [" + std::to_string(width) + "], " + s + "weight, " + s +
         "bias, " + Exact(eps) + ", False)";
}

std::string ScriptConv2d(const std::string& name, const std::string& x, bool bias, int64_t stride,
                         int64_t padding) {
  const std::string s = std::to_string(stride), p = std::to_string(padding);
  return "torch.conv2d(" + x + ", self." + name + ".weight, " +
         (bias ? "self." + name + ".bias" : std::string("None")) + ", [" + s + ", " + s + "], [" +
         p + ", " + p + "])";
}

}  // namespace sift::worker

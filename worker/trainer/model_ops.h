// Pieces the built-in models share: the activation functions HParams names, and the TorchScript
// expressions that repeat a layer's eval-mode forward in an exported module (export.h).
#pragma once

#include <torch/torch.h>

#include <string>

namespace sift::worker {

// relu (in place: the layers before keep their inputs, not their outputs), gelu, silu or tanh.
torch::Tensor Activate(torch::Tensor x, const std::string& kind);

// TorchScript expressions over `x` (a variable name); `name` is the layer's attribute path.
std::string ScriptActivation(const std::string& kind, const std::string& x);
std::string ScriptLinear(const std::string& name, const std::string& x);
// Eval mode: running statistics.
std::string ScriptBatchNorm(const std::string& name, const std::string& x, double eps);
std::string ScriptLayerNorm(const std::string& name, const std::string& x, int64_t width,
                            double eps);
std::string ScriptConv2d(const std::string& name, const std::string& x, bool bias, int64_t stride,
                         int64_t padding);

}  // namespace sift::worker

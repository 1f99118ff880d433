// Linear layer, optionally followed by ReLU, as one autograd node with its own forward and
// backward, for the MLP's layers on the CPU in fp32, and in bf16 under autocast.
//
// Against linear() then relu_() it saves passes over the activations and gradients: forward is
// one matrix product and one pass adding the bias and applying ReLU (addmm first copies the
// bias into the output, and ReLU is a third pass); backward is one pass that masks the gradient
// and sums it into the bias gradient, then the two matrix products (autograd runs
// threshold_backward, the products and a separate sum). The products go through Sgemm
// (sgemm.h). The results equal the plain layers' up to float rounding (summation order) and are
// bitwise repeatable for a given thread count.
#pragma once

#include <torch/torch.h>

namespace sift::worker {

// Whether FusedLinear handles these tensors: CPU float, 2-d input, bias present, autocast off
// (under autocast the plain layer runs in bf16).
bool FusedLinearApplies(const torch::Tensor& x, const torch::nn::Linear& layer);

// relu(x @ weight^T + bias) if `relu`, else x @ weight^T + bias; differentiable in all three.
torch::Tensor FusedLinear(const torch::Tensor& x, const torch::nn::Linear& layer, bool relu);

// A layer weight's bf16 copy for FusedLinearBf16, made again whenever the weight has changed:
// its version counter moved (in-place ops and FusedOptimizer bump it) or its storage did (a
// checkpoint loaded). Each copy is a new tensor, so a graph still holding the old one keeps it.
class Bf16Weight {
 public:
  const torch::Tensor& Of(const torch::Tensor& weight);

 private:
  torch::Tensor copy_;
  const void* source_ = nullptr;
  int64_t version_ = -1;
};

// Whether FusedLinearBf16 handles these tensors: CPU autocast to bf16 on, a 2-d float or
// bfloat16 input, float weight and bias, and oneDNN's bf16 gemm usable (GemmBf16Available()).
bool FusedLinearBf16Applies(const torch::Tensor& x, const torch::nn::Linear& layer);

// FusedLinear in mixed precision, for autocast's bf16: the products take bf16 operands (x cast
// once, or already bf16 from the previous layer; `weight`'s copy of the layer's weight) and
// accumulate in fp32. With `relu` the output is bf16, ready for the next layer's product; without
// (the head) it is fp32, for the loss. The parameters and their gradients stay fp32; the
// gradient flowing back to a bf16 input is bf16, as autocast's linear gives.
torch::Tensor FusedLinearBf16(const torch::Tensor& x, const torch::nn::Linear& layer, bool relu,
                              Bf16Weight& weight);

}  // namespace sift::worker

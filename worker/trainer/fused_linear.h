// Linear layer, optionally followed by ReLU, as one autograd node with its own forward and
// backward, for the MLP's layers on the CPU in fp32.
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

}  // namespace sift::worker

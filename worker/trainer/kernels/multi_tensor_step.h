// One optimizer step over all parameters at once with LibTorch's fused multi-tensor kernels
// (CUDA): a handful of kernel launches per step instead of about eight tensor ops per parameter.
// On CUDA the step was launch-bound (issue 15: 1.4-2.5 ms whatever the batch).
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "worker/trainer/kernels/fused_optimizer.h"

namespace sift::worker {

struct MultiTensorLists {
  std::vector<torch::Tensor> params, grads;
  std::vector<torch::Tensor> first, second;  // Adam(W): exp_avg, exp_avg_sq; SGD: momentum
  torch::Tensor step;  // float32 scalar on the device: the step count, shared by all parameters
  bool first_step = false;  // SGD: the momentum buffers take the gradient as they are
};

// Whether this LibTorch has a fused kernel for `kind` on CUDA: Adam from 1.13, AdamW from 2.1
// (_fused_adamw_), SGD from 2.3 (_fused_sgd_).
bool HasMultiTensorKernel(OptimizerKind kind);

// Runs the fused kernel for o.kind at learning rate o.lr. With found_inf (a float32 scalar on the
// device, nonzero after an fp16 overflow) the kernels leave every tensor as it was, without the
// host reading the flag. Adam(W)'s step count is advanced (and taken back on overflow) on the
// device. Only where HasMultiTensorKernel(o.kind).
void MultiTensorStep(const FusedOptimizerOptions& o, MultiTensorLists& lists,
                     const std::optional<torch::Tensor>& found_inf);

}  // namespace sift::worker

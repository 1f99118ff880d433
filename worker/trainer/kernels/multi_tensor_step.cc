#include "worker/trainer/kernels/multi_tensor_step.h"

#include <stdexcept>

#include "worker/trainer/torch_compat.h"

namespace sift::worker {

bool HasMultiTensorKernel(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdam:
      return true;
    case OptimizerKind::kAdamW:
      return SIFT_TORCH_AT_LEAST(2, 1);
    case OptimizerKind::kSgd:
      return SIFT_TORCH_AT_LEAST(2, 3);
  }
  return false;
}

void MultiTensorStep(const FusedOptimizerOptions& o, MultiTensorLists& l,
                     const std::optional<torch::Tensor>& found_inf) {
  torch::NoGradGuard no_grad;
  const c10::optional<at::Tensor> no_scale;  // gradients arrive unscaled (GradScaler::Unscale)
  const c10::optional<at::Tensor> inf =
      found_inf ? c10::optional<at::Tensor>(*found_inf) : c10::nullopt;
  if (o.kind == OptimizerKind::kSgd) {
#if SIFT_TORCH_AT_LEAST(2, 3)
    // Without momentum the kernel takes no buffers.
    const std::vector<torch::Tensor> buffers =
        o.momentum != 0.0 ? l.first : std::vector<torch::Tensor>{};
    at::_fused_sgd_(l.params, l.grads, buffers, o.weight_decay, o.momentum, o.lr,
                    /*dampening=*/0.0, o.nesterov, /*maximize=*/false, l.first_step, no_scale, inf);
    l.first_step = false;
    return;
#else
    throw std::logic_error("MultiTensorStep: this LibTorch has no _fused_sgd_");
#endif
  }
  // The kernels read the step count (for the bias corrections) but do not advance it: as
  // torch.optim's fused Adam does, add one before and take one back on overflow, on the device.
  l.step.add_(1);
  const std::vector<torch::Tensor> steps(l.params.size(), l.step);
  const std::vector<torch::Tensor> no_max;  // amsgrad off
  if (o.kind == OptimizerKind::kAdam) {
    at::_fused_adam_(l.params, l.grads, l.first, l.second, no_max, steps, o.lr, o.beta1, o.beta2,
                     o.weight_decay, o.eps, /*amsgrad=*/false, /*maximize=*/false, no_scale, inf);
  } else {
#if SIFT_TORCH_AT_LEAST(2, 1)
    at::_fused_adamw_(l.params, l.grads, l.first, l.second, no_max, steps, o.lr, o.beta1, o.beta2,
                      o.weight_decay, o.eps, /*amsgrad=*/false, /*maximize=*/false, no_scale, inf);
#else
    throw std::logic_error("MultiTensorStep: this LibTorch has no _fused_adamw_");
#endif
  }
  if (found_inf) l.step.sub_(*found_inf);
}

}  // namespace sift::worker

// Single-pass optimizer updates over raw float arrays: each element of the parameter, its
// gradient and its state is read once and written once, instead of once per tensor op as
// torch::optim does (Adam is six ops, so six passes over every state tensor).
// Torch-free: FusedOptimizer splits the arrays across threads and calls these per chunk.
//
// The arithmetic is torch::optim's, op for op, in float with the same rounding at each op and no
// contraction into fused multiply-adds (this file is built with -ffp-contract=off), so each
// element's result depends only on its own inputs: any chunking, thread count or vector width
// gives the same bits.
#pragma once

#include <cstdint>

namespace sift::worker {

// One Adam/AdamW step; coefficients as torch::optim::Adam(W) computes them for this step.
struct AdamStep {
  float beta1 = 0.9f;
  float one_minus_beta1 = 0.1f;
  float beta2 = 0.999f;
  float one_minus_beta2 = 0.001f;
  float bias_correction2_sqrt = 1.0f;  // sqrt(1 - beta2^step)
  float eps = 1e-8f;
  float neg_step_size = -1e-3f;  // -lr / (1 - beta1^step)
  float weight_decay = 0.0f;     // Adam: L2 added to the gradient (0: none)
  float decay_factor = 1.0f;     // AdamW: parameter multiplied by 1 - lr * weight_decay first
};

// p, m (exp_avg), v (exp_avg_sq) updated in place from gradient g; n elements.
void AdamUpdate(float* p, const float* g, float* m, float* v, int64_t n, const AdamStep& s);

// One SGD step with momentum (dampening 0) as torch::optim::SGD computes it.
struct SgdStep {
  float neg_lr = -0.01f;
  float momentum = 0.0f;  // 0: no buffer
  float weight_decay = 0.0f;
  bool nesterov = false;
  bool first = false;  // the buffer is set to the gradient, as torch's clone() on the first step
};

// p and the momentum buffer `buf` (unused when momentum is 0) updated in place; n elements.
void SgdUpdate(float* p, const float* g, float* buf, int64_t n, const SgdStep& s);

}  // namespace sift::worker

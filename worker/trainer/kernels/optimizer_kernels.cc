#include "worker/trainer/kernels/optimizer_kernels.h"

#include <cmath>

#include "worker/trainer/kernels/vector_loop.h"

namespace sift::worker {
namespace {

// Each line is one torch op: add_(grad, alpha) is a + alpha * b, addcmul_ is a + (value * b) * c,
// addcdiv_ is a + (value * b) / c.
template <bool kL2>
__attribute__((target_clones("avx512f", "avx2", "default"))) void Adam(
    float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
    int64_t n, const AdamStep& s) {
  const AdamStep c = s;  // by value: no aliasing with the arrays
  ForEach(
      n, [=](int64_t i) __attribute__((always_inline)) {
        float grad = g[i];
        if (kL2) grad = grad + c.weight_decay * p[i];
        const float param = p[i] * c.decay_factor;
        const float mi = m[i] * c.beta1 + c.one_minus_beta1 * grad;
        const float vi = v[i] * c.beta2 + c.one_minus_beta2 * grad * grad;
        const float denom = std::sqrt(vi) / c.bias_correction2_sqrt + c.eps;
        m[i] = mi;
        v[i] = vi;
        p[i] = param + c.neg_step_size * mi / denom;
      });
}

// kFirst: the buffer starts as the gradient, as torch's clone() on the first step.
template <bool kL2, bool kNesterov, bool kFirst>
__attribute__((target_clones("avx512f", "avx2", "default"))) void SgdMomentum(
    float* __restrict p, const float* __restrict g, float* __restrict buf, int64_t n,
    const SgdStep& s) {
  const SgdStep c = s;
  ForEach(
      n, [=](int64_t i) __attribute__((always_inline)) {
        float d = g[i];
        if (kL2) d = d + c.weight_decay * p[i];
        const float b = kFirst ? d : buf[i] * c.momentum + d;
        buf[i] = b;
        d = kNesterov ? d + c.momentum * b : b;
        p[i] = p[i] + c.neg_lr * d;
      });
}

template <bool kL2, bool kNesterov>
void SgdMomentumStep(float* p, const float* g, float* buf, int64_t n, const SgdStep& s) {
  if (s.first) {
    SgdMomentum<kL2, kNesterov, true>(p, g, buf, n, s);
  } else {
    SgdMomentum<kL2, kNesterov, false>(p, g, buf, n, s);
  }
}

template <bool kL2>
__attribute__((target_clones("avx512f", "avx2", "default"))) void SgdPlain(
    float* __restrict p, const float* __restrict g, int64_t n, const SgdStep& s) {
  const SgdStep c = s;
  ForEach(
      n, [=](int64_t i) __attribute__((always_inline)) {
        float d = g[i];
        if (kL2) d = d + c.weight_decay * p[i];
        p[i] = p[i] + c.neg_lr * d;
      });
}

}  // namespace

void AdamUpdate(float* p, const float* g, float* m, float* v, int64_t n, const AdamStep& s) {
  if (s.weight_decay != 0.0f) {
    Adam<true>(p, g, m, v, n, s);
  } else {
    Adam<false>(p, g, m, v, n, s);
  }
}

void SgdUpdate(float* p, const float* g, float* buf, int64_t n, const SgdStep& s) {
  const bool l2 = s.weight_decay != 0.0f;
  if (s.momentum == 0.0f) {
    l2 ? SgdPlain<true>(p, g, n, s) : SgdPlain<false>(p, g, n, s);
  } else if (s.nesterov) {
    l2 ? SgdMomentumStep<true, true>(p, g, buf, n, s)
       : SgdMomentumStep<false, true>(p, g, buf, n, s);
  } else {
    l2 ? SgdMomentumStep<true, false>(p, g, buf, n, s)
       : SgdMomentumStep<false, false>(p, g, buf, n, s);
  }
}

}  // namespace sift::worker

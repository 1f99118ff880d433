#include "worker/trainer/fused_linear.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include "worker/trainer/sgemm.h"

namespace sift::worker {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Elements per thread below which a pass is not split (an OpenMP fork costs a few microseconds).
constexpr int64_t kGrainElements = 16384;

// Runs f(i) for i in [0, n) in fixed blocks of 16, which GCC vectorizes at -O2 (its cheap cost
// model only takes loops whose trip count the vector width divides), then a scalar tail.
template <typename F>
__attribute__((always_inline)) inline void ForEach(int64_t n, F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int64_t j = 0; j < 16; ++j) f(i + j);
  }
  for (; i < n; ++i) f(i);
}

// out[r, :] = out[r, :] + bias, then max(., 0) if kRelu, for rows [r0, r1) of a [rows, n] matrix.
// ReLU keeps NaN as torch's does.
template <bool kRelu>
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddBias(
    float* __restrict out, const float* __restrict bias, int64_t r0, int64_t r1, int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    float* __restrict row = out + r * n;
    ForEach(n, [=](int64_t j) __attribute__((always_inline)) {
      const float v = row[j] + bias[j];
      row[j] = kRelu && v < 0.0f ? 0.0f : v;
    });
  }
}

// For columns [c0, c1) of [rows, n] matrices: masked = grad where out > 0, else 0, as
// threshold_backward (kMask), or grad itself; bias_grad[c] = the column's sum in row order, so
// the bits depend only on the column, not on how the columns are split over threads.
template <bool kMask>
__attribute__((target_clones("avx512f", "avx2", "default"))) void MaskAndSum(
    const float* __restrict grad, const float* __restrict out, float* __restrict masked,
    float* __restrict bias_grad, int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  float* __restrict sum = bias_grad + c0;
  ForEach(c1 - c0, [=](int64_t c) __attribute__((always_inline)) { sum[c] = 0.0f; });
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * n + c0;
    const float* __restrict g = grad + base;
    const float* __restrict o = kMask ? out + base : nullptr;
    float* __restrict m = masked + base;
    ForEach(c1 - c0, [=](int64_t c) __attribute__((always_inline)) {
      const float gc = g[c];  // loaded unconditionally, so the select vectorizes
      const float v = !kMask || o[c] > 0.0f ? gc : 0.0f;
      m[c] = v;
      sum[c] += v;
    });
  }
}

// Items per thread for at::parallel_for when each item is `per_item` elements.
int64_t Grain(int64_t per_item) { return std::max<int64_t>(1, kGrainElements / per_item); }

struct LinearFunction : torch::autograd::Function<LinearFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, bool relu) {
    const Tensor in = x.contiguous();
    const Tensor w = weight.contiguous();
    const Tensor b = bias.contiguous();
    const int64_t rows = in.size(0), n = w.size(0);
    Tensor out = torch::empty({rows, n}, in.options());
    Sgemm(/*trans_a=*/false, /*trans_b=*/true, in, w, out);
    float* o = out.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    at::parallel_for(0, rows, Grain(n), [&](int64_t r0, int64_t r1) {
      relu ? AddBias<true>(o, bp, r0, r1, n) : AddBias<false>(o, bp, r0, r1, n);
    });
    // The output, not a copy: the mask needs only its sign, and backward reads it before any
    // later layer could change it (autograd's version counter checks that).
    ctx->save_for_backward({in, w, relu ? out : Tensor()});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor& in = saved[0];
    const Tensor& w = saved[1];
    const Tensor& out = saved[2];
    const Tensor grad = grads[0].contiguous();
    const int64_t rows = grad.size(0), n = grad.size(1);
    Tensor masked = torch::empty_like(grad);
    Tensor bias_grad = torch::empty({n}, grad.options());
    const float* o = out.defined() ? out.data_ptr<float>() : nullptr;
    const float* g = grad.data_ptr<float>();
    float* mp = masked.data_ptr<float>();
    float* bp = bias_grad.data_ptr<float>();
    at::parallel_for(0, n, Grain(rows), [&](int64_t c0, int64_t c1) {
      o != nullptr ? MaskAndSum<true>(g, o, mp, bp, rows, n, c0, c1)
                   : MaskAndSum<false>(g, o, mp, bp, rows, n, c0, c1);
    });
    Tensor grad_in, grad_w;
    if (ctx->needs_input_grad(0)) {
      grad_in = torch::empty_like(in);
      Sgemm(/*trans_a=*/false, /*trans_b=*/false, masked, w, grad_in);
    }
    if (ctx->needs_input_grad(1)) {
      grad_w = torch::empty_like(w);
      Sgemm(/*trans_a=*/true, /*trans_b=*/false, masked, in, grad_w);
    }
    return {grad_in, grad_w, ctx->needs_input_grad(2) ? bias_grad : Tensor(), Tensor()};
  }
};

}  // namespace

bool FusedLinearApplies(const torch::Tensor& x, const torch::nn::Linear& layer) {
  const auto is_cpu_float = [](const Tensor& t) {
    return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
           t.layout() == torch::kStrided;
  };
  return x.dim() == 2 && is_cpu_float(x) && is_cpu_float(layer->weight) &&
         is_cpu_float(layer->bias) && !at::autocast::is_cpu_enabled();
}

torch::Tensor FusedLinear(const torch::Tensor& x, const torch::nn::Linear& layer, bool relu) {
  return LinearFunction::apply(x, layer->weight, layer->bias, relu);
}

}  // namespace sift::worker

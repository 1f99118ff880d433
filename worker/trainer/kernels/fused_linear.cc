#include "worker/trainer/kernels/fused_linear.h"

#include <ATen/Parallel.h>

#include "worker/trainer/kernels/bf16_bits.h"
#include "worker/trainer/kernels/sgemm.h"
#include "worker/trainer/kernels/tensor_data.h"
#include "worker/trainer/kernels/vector_loop.h"
#include "worker/trainer/torch_compat.h"

namespace sift::worker {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// out[r, :] = out[r, :] + bias, then max(., 0) if kRelu, for rows [r0, r1) of a [rows, n] matrix.
// ReLU keeps NaN as torch's does.
template <bool kRelu>
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddBias(
    float* __restrict out, const float* __restrict bias, int64_t r0, int64_t r1, int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    float* __restrict row = out + r * n;
    ForEach(
        n, [=](int64_t j) __attribute__((always_inline)) {
          const float v = row[j] + bias[j];
          row[j] = kRelu && v < 0.0f ? 0.0f : v;
        });
  }
}

// For columns [c0, c1) of [rows, n] matrices: masked = grad where out > 0, else 0, as
// threshold_backward (kMask), or grad itself; bias_grad[c] = the column's sum in row order, so
// the bits depend only on the column, not on how the columns are split over threads. Grad and
// Act (the output and masked arrays) are float, or bf16 bits for the bf16 path, which sums the
// bias gradient in fp32 from the values before rounding.
template <bool kMask, typename Grad, typename Act>
__attribute__((target_clones("avx512f", "avx2", "default"))) void MaskAndSum(
    const Grad* __restrict grad, const Act* __restrict out, Act* __restrict masked,
    float* __restrict bias_grad, int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  float* __restrict sum = bias_grad + c0;
  ForEach(
      c1 - c0, [=](int64_t c) __attribute__((always_inline)) { sum[c] = 0.0f; });
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * n + c0;
    const Grad* __restrict g = grad + base;
    const Act* __restrict o = kMask ? out + base : nullptr;
    Act* __restrict m = masked + base;
    ForEach(
        c1 - c0, [=](int64_t c) __attribute__((always_inline)) {
          const float gc = Load(g[c]);  // loaded unconditionally, so the select vectorizes
          const float v = !kMask || Load(o[c]) > 0.0f ? gc : 0.0f;
          Store(m[c], v);
          sum[c] += v;
        });
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void CastToBf16(
    const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  ForEach(
      n, [=](int64_t i) __attribute__((always_inline)) { out[i] = ToBf16Bits(in[i]); });
}

// AddBias for the bf16 path: reads the fp32 product, writes the bf16 activation.
template <bool kRelu>
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddBiasToBf16(
    const float* __restrict acc, const float* __restrict bias, uint16_t* __restrict out, int64_t r0,
    int64_t r1, int64_t n) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* __restrict a = acc + r * n;
    uint16_t* __restrict o = out + r * n;
    ForEach(
        n, [=](int64_t j) __attribute__((always_inline)) {
          const float v = a[j] + bias[j];
          o[j] = ToBf16Bits(kRelu && v < 0.0f ? 0.0f : v);
        });
  }
}

// A contiguous float tensor's bf16 copy.
Tensor ToBf16(const Tensor& t) {
  Tensor out = torch::empty(t.sizes(), t.options().dtype(torch::kBFloat16));
  const float* in = t.data_ptr<float>();
  uint16_t* o = Bf16Bits(out);
  at::parallel_for(0, t.numel(), kGrainElements,
                   [&](int64_t i0, int64_t i1) { CastToBf16(in + i0, o + i0, i1 - i0); });
  return out;
}

// Backward of both functions: one pass over the columns masks the gradient (float or bf16) into
// the products' type Act (float, or bf16 bits) and sums the bias gradient in fp32; then the input
// and weight products with `gemm`, into fp32 (the input gradient cast to bf16 if bf16_grad_in).
// Forward saved the products' input, weight and, for ReLU, output.
template <typename Act, typename Gemm>
variable_list LinearBackward(AutogradContext* ctx, const Tensor& grad_any, Gemm gemm,
                             bool bf16_grad_in) {
  const auto saved = ctx->get_saved_variables();
  const Tensor& in = saved[0];
  const Tensor& w = saved[1];
  const Tensor& out = saved[2];
  const Tensor grad = grad_any.contiguous();
  const int64_t rows = grad.size(0), n = grad.size(1);
  const auto fp32 = in.options().dtype(torch::kFloat32);
  Tensor masked = torch::empty({rows, n}, in.options());
  Tensor bias_grad = torch::empty({n}, fp32);
  const Act* o = out.defined() ? KernelData<Act>(out) : nullptr;
  Act* mp = KernelData<Act>(masked);
  float* bp = bias_grad.data_ptr<float>();
  const auto mask_and_sum = [&](const auto* g) {
    at::parallel_for(0, n, Grain(rows), [&](int64_t c0, int64_t c1) {
      o != nullptr ? MaskAndSum<true>(g, o, mp, bp, rows, n, c0, c1)
                   : MaskAndSum<false>(g, o, mp, bp, rows, n, c0, c1);
    });
  };
  if (grad.scalar_type() == torch::kBFloat16) {
    mask_and_sum(Bf16Bits(grad));
  } else {
    mask_and_sum(grad.data_ptr<float>());
  }
  Tensor grad_in, grad_w;
  if (ctx->needs_input_grad(0)) {
    grad_in = torch::empty({rows, in.size(1)}, fp32);
    gemm(/*trans_a=*/false, /*trans_b=*/false, masked, w, grad_in);
    if (bf16_grad_in) grad_in = ToBf16(grad_in);
  }
  if (ctx->needs_input_grad(1)) {  // fp32, the master gradient's type
    grad_w = torch::empty({n, in.size(1)}, fp32);
    gemm(/*trans_a=*/true, /*trans_b=*/false, masked, in, grad_w);
  }
  return {grad_in, grad_w, ctx->needs_input_grad(2) ? bias_grad : Tensor(), Tensor()};
}

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
    return LinearBackward<float>(ctx, grads[0], Sgemm, /*bf16_grad_in=*/false);
  }
};

// LinearFunction with bf16 operands and fp32 products, master weight and gradients; the weight's
// bf16 copy comes in as a fourth input that needs no gradient.
struct Bf16LinearFunction : torch::autograd::Function<Bf16LinearFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, const Tensor& weight_bf16, bool relu) {
    const bool bf16_in = x.scalar_type() == torch::kBFloat16;
    const Tensor in = bf16_in ? x.contiguous() : ToBf16(x.contiguous());
    const Tensor b = bias.contiguous();
    const int64_t rows = in.size(0), n = weight.size(0);
    Tensor acc = torch::empty({rows, n}, b.options());
    GemmBf16(/*trans_a=*/false, /*trans_b=*/true, in, weight_bf16, acc);
    const float* bp = b.data_ptr<float>();
    Tensor out;
    if (relu) {
      out = torch::empty({rows, n}, in.options());
      const float* a = acc.data_ptr<float>();
      uint16_t* o = Bf16Bits(out);
      at::parallel_for(0, rows, Grain(n),
                       [&](int64_t r0, int64_t r1) { AddBiasToBf16<true>(a, bp, o, r0, r1, n); });
    } else {
      out = acc;
      float* o = out.data_ptr<float>();
      at::parallel_for(0, rows, Grain(n),
                       [&](int64_t r0, int64_t r1) { AddBias<false>(o, bp, r0, r1, n); });
    }
    ctx->save_for_backward({in, weight_bf16, relu ? out : Tensor()});
    ctx->saved_data["bf16_in"] = bf16_in;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list out =
        LinearBackward<uint16_t>(ctx, grads[0], GemmBf16, ctx->saved_data["bf16_in"].toBool());
    out.emplace_back();  // weight_bf16
    return out;
  }
};

}  // namespace

bool FusedLinearApplies(const torch::Tensor& x, const torch::nn::Linear& layer) {
  const auto is_cpu_float = [](const Tensor& t) {
    return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
           t.layout() == torch::kStrided;
  };
  return x.dim() == 2 && is_cpu_float(x) && is_cpu_float(layer->weight) &&
         is_cpu_float(layer->bias) && !AutocastEnabled(c10::DeviceType::CPU);
}

torch::Tensor FusedLinear(const torch::Tensor& x, const torch::nn::Linear& layer, bool relu) {
  return LinearFunction::apply(x, layer->weight, layer->bias, relu);
}

const torch::Tensor& Bf16Weight::Of(const torch::Tensor& weight) {
  const void* source = weight.data_ptr();
  const int64_t version = weight._version();
  if (!copy_.defined() || source != source_ || version != version_ ||
      copy_.sizes() != weight.sizes()) {
    copy_ = ToBf16(weight.detach().contiguous());
    source_ = source;
    version_ = version;
  }
  return copy_;
}

bool FusedLinearBf16Applies(const torch::Tensor& x, const torch::nn::Linear& layer) {
  const auto is_cpu = [](const Tensor& t, bool bf16_ok) {
    return t.defined() && t.device().is_cpu() && t.layout() == torch::kStrided &&
           (t.scalar_type() == torch::kFloat32 || (bf16_ok && t.scalar_type() == torch::kBFloat16));
  };
  return x.dim() == 2 && is_cpu(x, true) && is_cpu(layer->weight, false) &&
         is_cpu(layer->bias, false) && AutocastEnabled(c10::DeviceType::CPU) &&
         AutocastDtype(c10::DeviceType::CPU) == at::kBFloat16 && GemmBf16Available();
}

torch::Tensor FusedLinearBf16(const torch::Tensor& x, const torch::nn::Linear& layer, bool relu,
                              Bf16Weight& weight) {
  return Bf16LinearFunction::apply(x, layer->weight, layer->bias, weight.Of(layer->weight), relu);
}

}  // namespace sift::worker

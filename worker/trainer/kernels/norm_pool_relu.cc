#include "worker/trainer/kernels/norm_pool_relu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "worker/trainer/kernels/bf16_bits.h"
#include "worker/trainer/kernels/norm_pool_kernels.h"
#include "worker/trainer/kernels/tensor_data.h"
#include "worker/trainer/kernels/vector_loop.h"

namespace sift::worker {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The per-channel coefficients the kernels take (norm_pool_kernels.h), owned.
struct Coeffs {
  std::vector<float> scale, shift, mean, invstd, k_dy, k_x, k_0;

  explicit Coeffs(int64_t c)
      : scale(c), shift(c), mean(c), invstd(c), k_dy(c, 0.0f), k_x(c, 0.0f), k_0(c, 0.0f) {}
  NormCoeffs View() const {
    return {scale.data(), shift.data(), mean.data(), k_dy.data(), k_x.data(), k_0.data()};
  }
};

// Runs f(T{}) with T = float or uint16_t (bf16 bits) for x's dtype.
template <typename F>
void ForDtype(const Tensor& x, F f) {
  x.scalar_type() == torch::kBFloat16 ? f(uint16_t{}) : f(float{});
}

int64_t Chunks(int64_t items) {
  return std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), items));
}

// Splits [0, items) into one chunk per intra-op thread, the same split whichever thread runs
// which chunk, and runs f(chunk, begin, end); per-chunk partial sums then add up in chunk order,
// so the bits depend on the thread count only.
template <typename F>
void ForChunks(int64_t items, F f) {
  const int64_t chunks = Chunks(items);
  at::parallel_for(0, chunks, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) f(k, items * k / chunks, items * (k + 1) / chunks);
  });
}

// Batch statistics of x's channels: mean and biased variance, in double.
template <typename T>
void BatchStats(const T* x, const NhwcShape& s, std::vector<double>& mean,
                std::vector<double>& var) {
  const int64_t c = s.c, rows = s.Count();
  std::vector<float> ref(c);
  for (int64_t j = 0; j < c; ++j) ref[j] = Load(x[j]);  // the first pixel: a rough mean
  const int64_t chunks = Chunks(rows);
  std::vector<double> sums(2 * c * chunks, 0.0);
  ForChunks(rows, [&](int64_t k, int64_t r0, int64_t r1) {
    ShiftedSums(x, ref.data(), r0, r1, c, sums.data() + 2 * c * k, sums.data() + 2 * c * k + c);
  });
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  for (int64_t j = 0; j < c; ++j) {
    double sum = 0.0, sumsq = 0.0;
    for (int64_t k = 0; k < chunks; ++k) {
      sum += sums[2 * c * k + j];
      sumsq += sums[2 * c * k + c + j];
    }
    const double d = sum / static_cast<double>(rows);
    mean[j] = ref[j] + d;
    var[j] = std::max(0.0, sumsq / static_cast<double>(rows) - d * d);
  }
}

Tensor FloatVector(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kFloat32)
      .clone();
}

std::vector<float> FloatsOf(const Tensor& t) {
  const Tensor f = t.detach().to(torch::kFloat32).contiguous();
  return {f.data_ptr<float>(), f.data_ptr<float>() + f.numel()};
}

// Coefficients for normalizing with `mean` and `invstd`: y = (x - mean) * invstd * weight + bias
// as x * scale + shift.
Coeffs MakeCoeffs(const std::vector<float>& mean, const std::vector<float>& invstd,
                  const Tensor& weight, const Tensor& bias) {
  const std::vector<float> w = FloatsOf(weight), b = FloatsOf(bias);
  Coeffs k(static_cast<int64_t>(mean.size()));
  k.mean = mean;
  k.invstd = invstd;
  for (size_t j = 0; j < mean.size(); ++j) {
    k.scale[j] = w[j] * invstd[j];
    k.shift[j] = b[j] - mean[j] * k.scale[j];
  }
  return k;
}

NhwcShape ShapeOf(const Tensor& x, bool pool) {
  NhwcShape s{x.size(0), x.size(1), x.size(2), x.size(3), 0, 0, pool};
  s.ph = pool ? s.h / 2 : s.h;
  s.pw = pool ? s.w / 2 : s.w;
  return s;
}

// Lines per chunk: a line reads one or two input rows.
int64_t LineGrain(const NhwcShape& s) { return Grain((s.pool ? 2 : 1) * s.w * s.c); }

template <typename T>
void Forward(const Tensor& x, const Tensor& out, const Coeffs& k, const NhwcShape& s) {
  const T* xp = KernelData<T>(x);
  T* op = KernelData<T>(out);
  const NormCoeffs view = k.View();
  at::parallel_for(0, s.Lines(), LineGrain(s), [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) ForwardLine(xp, op, view, s, l);
  });
}

// Per channel: dsum = sum(dy) and dxsum = sum(dy * (x - mean)).
template <typename T>
void GradSums(const Tensor& x, const Tensor& dout, const Coeffs& k, const NhwcShape& s,
              std::vector<double>& dsum, std::vector<double>& dxsum) {
  const T* xp = KernelData<T>(x);
  const T* dp = KernelData<T>(dout);
  const NormCoeffs view = k.View();
  const int64_t c = s.c, chunks = Chunks(s.Lines());
  std::vector<double> sums(2 * c * chunks, 0.0);
  ForChunks(s.Lines(), [&](int64_t chunk, int64_t l0, int64_t l1) {
    std::vector<float> line(2 * c);
    double* total = sums.data() + 2 * c * chunk;
    for (int64_t l = l0; l < l1; ++l) {  // fp32 within a line, double across lines
      std::fill(line.begin(), line.end(), 0.0f);
      GradSumsLine(xp, dp, view, s, l, line.data(), line.data() + c);
      for (int64_t j = 0; j < 2 * c; ++j) total[j] += line[j];
    }
  });
  dsum.assign(c, 0.0);
  dxsum.assign(c, 0.0);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    for (int64_t j = 0; j < c; ++j) {
      dsum[j] += sums[2 * c * chunk + j];
      dxsum[j] += sums[2 * c * chunk + c + j];
    }
  }
}

template <typename T>
void InputGradient(const Tensor& x, const Tensor& dout, const Tensor& dx, const Coeffs& k,
                   const NhwcShape& s) {
  const T* xp = KernelData<T>(x);
  const T* dp = KernelData<T>(dout);
  T* gp = KernelData<T>(dx);
  const NormCoeffs view = k.View();
  // The lines, then (odd height, pooling) each image's last row, which no window covers.
  const int64_t uncovered = s.pool && s.h % 2 != 0 ? s.n : 0;
  at::parallel_for(0, s.Lines() + uncovered, LineGrain(s), [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      if (l < s.Lines()) {
        InputGradLine(xp, dp, gp, view, s, l);
      } else {
        const int64_t first = s.In(l - s.Lines(), s.h - 1);
        InputGradUncovered(xp + first, gp + first, view, s.w, s.c);
      }
    }
  });
}

Tensor EmptyNhwc(const Tensor& like, int64_t h, int64_t w) {
  return torch::empty({like.size(0), like.size(1), h, w},
                      like.options().memory_format(at::MemoryFormat::ChannelsLast));
}

struct NormPoolReluFunction : torch::autograd::Function<NormPoolReluFunction> {
  // running_mean, running_var and batches_tracked are updated in place in training.
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, Tensor running_mean, Tensor running_var,
                        Tensor batches_tracked, bool training, c10::optional<double> momentum,
                        double eps, bool pool) {
    const NhwcShape s = ShapeOf(x, pool);
    std::vector<float> mean(s.c), invstd(s.c);
    if (training) {
      std::vector<double> m, v;
      ForDtype(x, [&](auto t) { BatchStats(KernelData<decltype(t)>(x), s, m, v); });
      const double count = static_cast<double>(s.Count());
      batches_tracked.add_(1);
      const double factor =
          momentum ? *momentum : 1.0 / static_cast<double>(batches_tracked.item<int64_t>());
      // BatchNorm2d keeps the unbiased variance.
      const Tensor unbiased =
          torch::from_blob(v.data(), {s.c}, torch::kFloat64) * (count / std::max(1.0, count - 1.0));
      running_mean.mul_(1.0 - factor)
          .add_(torch::from_blob(m.data(), {s.c}, torch::kFloat64).to(torch::kFloat32), factor);
      running_var.mul_(1.0 - factor).add_(unbiased.to(torch::kFloat32), factor);
      for (int64_t j = 0; j < s.c; ++j) {
        mean[j] = static_cast<float>(m[j]);
        invstd[j] = static_cast<float>(1.0 / std::sqrt(v[j] + eps));
      }
    } else {
      const std::vector<float> rm = FloatsOf(running_mean), rv = FloatsOf(running_var);
      for (int64_t j = 0; j < s.c; ++j) {
        mean[j] = rm[j];
        invstd[j] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(rv[j]) + eps));
      }
    }
    const Coeffs k = MakeCoeffs(mean, invstd, weight, bias);
    Tensor out = EmptyNhwc(x, s.ph, s.pw);
    ForDtype(x, [&](auto t) { Forward<decltype(t)>(x, out, k, s); });
    ctx->save_for_backward({x, weight, bias, FloatVector(mean), FloatVector(invstd)});
    ctx->saved_data["training"] = training;
    ctx->saved_data["pool"] = pool;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor& x = saved[0];
    const bool training = ctx->saved_data["training"].toBool();
    const NhwcShape s = ShapeOf(x, ctx->saved_data["pool"].toBool());
    Coeffs k = MakeCoeffs(FloatsOf(saved[3]), FloatsOf(saved[4]), saved[1], saved[2]);
    const Tensor dout = grads[0].to(x.scalar_type()).contiguous(at::MemoryFormat::ChannelsLast);

    std::vector<double> dsum, dxsum;
    ForDtype(x, [&](auto t) { GradSums<decltype(t)>(x, dout, k, s, dsum, dxsum); });
    const std::vector<float> w = FloatsOf(saved[1]);
    std::vector<float> grad_w(s.c), grad_b(s.c);
    // dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) in training, where xhat =
    // (x - mean) * invstd; in eval the batch terms vanish: dx = w * invstd * dy.
    const double count = static_cast<double>(std::max<int64_t>(1, s.Count()));
    for (int64_t j = 0; j < s.c; ++j) {
      const double invstd = k.invstd[j], scale = static_cast<double>(w[j]) * invstd;
      grad_b[j] = static_cast<float>(dsum[j]);
      grad_w[j] = static_cast<float>(dxsum[j] * invstd);
      k.k_dy[j] = static_cast<float>(scale);
      if (training) {
        const double kx = -scale * invstd * invstd * dxsum[j] / count;
        k.k_x[j] = static_cast<float>(kx);
        k.k_0[j] = static_cast<float>(-scale * dsum[j] / count - kx * k.mean[j]);
      }
    }
    Tensor dx;
    if (ctx->needs_input_grad(0)) {
      dx = EmptyNhwc(x, s.h, s.w);
      ForDtype(x, [&](auto t) { InputGradient<decltype(t)>(x, dout, dx, k, s); });
    }
    return {dx,
            ctx->needs_input_grad(1) ? FloatVector(grad_w) : Tensor(),
            ctx->needs_input_grad(2) ? FloatVector(grad_b) : Tensor(),
            Tensor(),
            Tensor(),
            Tensor(),
            Tensor(),
            Tensor(),
            Tensor(),
            Tensor()};
  }
};

struct GlobalMeanFunction : torch::autograd::Function<GlobalMeanFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    const int64_t n = x.size(0), c = x.size(1), pixels = x.size(2) * x.size(3);
    Tensor out = torch::empty({n, c}, x.options());
    ForDtype(x, [&](auto t) {
      using T = decltype(t);
      const T* xp = KernelData<T>(x);
      T* op = KernelData<T>(out);
      at::parallel_for(0, n, Grain(pixels * c), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          ImageMean(xp + i * pixels * c, op + i * c, pixels, c);
        }
      });
    });
    ctx->saved_data["h"] = x.size(2);
    ctx->saved_data["w"] = x.size(3);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t h = ctx->saved_data["h"].toInt(), w = ctx->saved_data["w"].toInt();
    const Tensor dout = grads[0].contiguous();
    const int64_t n = dout.size(0), c = dout.size(1);
    Tensor dx =
        torch::empty({n, c, h, w}, dout.options().memory_format(at::MemoryFormat::ChannelsLast));
    ForDtype(dout, [&](auto t) {
      using T = decltype(t);
      const T* dp = KernelData<T>(dout);
      T* gp = KernelData<T>(dx);
      at::parallel_for(0, n, Grain(h * w * c), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          ImageMeanGrad(dp + i * c, gp + i * h * w * c, h * w, c);
        }
      });
    });
    return {dx};
  }
};

bool IsCpuFloat(const Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.layout() == torch::kStrided &&
         t.scalar_type() == torch::kFloat32;
}

}  // namespace

bool NormPoolReluApplies(const torch::Tensor& x, const torch::nn::BatchNorm2d& norm) {
  static const bool disabled = std::getenv("SIFT_NO_FUSED_NORM") != nullptr;  // for A/B runs
  const auto& o = norm->options;
  return !disabled && x.dim() == 4 && x.device().is_cpu() && x.layout() == torch::kStrided &&
         // bf16 only with the AVX-512 loops: the portable ones are 3x slower than LibTorch's.
         (x.scalar_type() == torch::kFloat32 ||
          (x.scalar_type() == torch::kBFloat16 && NormPoolAvx512Enabled())) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) && x.numel() > 0 && o.affine() &&
         o.track_running_stats() && IsCpuFloat(norm->weight) && IsCpuFloat(norm->bias) &&
         IsCpuFloat(norm->running_mean) && IsCpuFloat(norm->running_var);
}

torch::Tensor NormPoolRelu(const torch::Tensor& x, const torch::nn::BatchNorm2d& norm, bool pool) {
  const auto& o = norm->options;
  return NormPoolReluFunction::apply(x, norm->weight, norm->bias, norm->running_mean,
                                     norm->running_var, norm->num_batches_tracked,
                                     norm->is_training(), o.momentum(), o.eps(), pool);
}

bool GlobalMeanApplies(const torch::Tensor& x) {
  static const bool disabled = std::getenv("SIFT_NO_FUSED_NORM") != nullptr;
  return !disabled && x.dim() == 4 && x.device().is_cpu() && x.layout() == torch::kStrided &&
         (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kBFloat16) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) && x.numel() > 0;
}

torch::Tensor GlobalMean(const torch::Tensor& x) { return GlobalMeanFunction::apply(x); }

}  // namespace sift::worker

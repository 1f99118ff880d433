#include "worker/trainer/kernels/norm_pool_kernels.h"

#include <algorithm>
#include <atomic>

#include "worker/trainer/kernels/bf16_bits.h"
#include "worker/trainer/kernels/norm_pool_avx512.h"
#include "worker/trainer/kernels/vector_loop.h"

// Built with -ffp-contract=off: no fused multiply-adds, so backward's recomputed window maxima
// are forward's to the bit, and these loops and the AVX-512 ones (norm_pool_avx512.cc) give the
// same bits.

namespace sift::worker {
namespace {

// Rows summed in fp32 before the sums fold into double: fp32 keeps the loops vectorized, the
// blocks keep its rounding error at that of 64 additions. Channels go in blocks of kStatChannels.
using avx512::kBlockRows;
constexpr int64_t kStatChannels = avx512::kMaxSumChannels;

// ---- Portable loops, vectorized by GCC (target clones).

// ReLU keeping NaN, as torch's does; and its backward mask (threshold_backward passes the
// gradient unless the output is <= 0, so NaN passes).
__attribute__((always_inline)) inline float Relu(float v) { return v <= 0.0f ? 0.0f : v; }
__attribute__((always_inline)) inline bool Passes(float v) { return !(v <= 0.0f); }

// One step of max_pool2d's scan: a later element wins if larger or NaN, so ties keep the first.
__attribute__((always_inline)) inline void Take(float v, float x, float k, float& m, float& xm,
                                                float& km) {
  const bool take = v > m || v != v;
  m = take ? v : m;
  xm = take ? x : xm;
  km = take ? k : km;
}

// The window's four inputs (row-major), their normalized maximum m, the winning input xm and its
// index km in 0..3 (a float: with an int, GCC leaves the loops using it scalar).
template <typename T>
struct Window {
  float x[4], m, xm, km;

  __attribute__((always_inline))
  Window(const T* p0, const T* p1, int64_t cs, int64_t c, float a, float b) {
    x[0] = Load(p0[c]);
    x[1] = Load(p0[cs + c]);
    x[2] = Load(p1[c]);
    x[3] = Load(p1[cs + c]);
    m = x[0] * a + b;
    xm = x[0];
    km = 0.0f;
    Take(x[1] * a + b, x[1], 1.0f, m, xm, km);  // unrolled: GCC vectorizes no inner loop here
    Take(x[2] * a + b, x[2], 2.0f, m, xm, km);
    Take(x[3] * a + b, x[3], 3.0f, m, xm, km);
  }
};

// ShiftedSums over c channels of rows `stride` apart.
template <typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void ShiftedSumsPortable(
    const T* __restrict x, const float* __restrict ref, int64_t r0, int64_t r1, int64_t c,
    int64_t stride, float* __restrict s, float* __restrict q, double* __restrict sum,
    double* __restrict sumsq) {
  for (int64_t b = r0; b < r1; b += kBlockRows) {
    ForEach(
        c, [=](int64_t j) __attribute__((always_inline)) { s[j] = q[j] = 0.0f; });
    for (int64_t r = b; r < std::min(b + kBlockRows, r1); ++r) {
      const T* __restrict row = x + r * stride;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const float d = Load(row[j]) - ref[j];
            s[j] += d;
            q[j] += d * d;
          });
    }
    for (int64_t j = 0; j < c; ++j) {
      sum[j] += s[j];
      sumsq[j] += q[j];
    }
  }
}

// Forward of one line: normalize, pool, ReLU.
template <bool kPool, typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void ForwardLinePortable(
    const T* __restrict x, T* __restrict out, const float* __restrict a, const float* __restrict b,
    const NhwcShape& s, int64_t line) {
  const int64_t c = s.c;
  T* __restrict o = out + s.Out(line);
  if constexpr (kPool) {
    const PooledRows<const T> rows(x, s, line);
    const T* r0 = rows.r0;
    const T* r1 = rows.r1;
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      const T* __restrict p0 = r0 + 2 * pw * c;
      const T* __restrict p1 = r1 + 2 * pw * c;
      T* __restrict op = o + pw * c;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const Window<T> win(p0, p1, c, j, a[j], b[j]);
            Store(op[j], Relu(win.m));
          });
    }
  } else {
    const T* __restrict in = x + s.Out(line);
    for (int64_t p = 0; p < s.pw; ++p) {
      const T* __restrict ip = in + p * c;
      T* __restrict op = o + p * c;
      ForEach(
          c, [=](int64_t j)
                 __attribute__((always_inline)) { Store(op[j], Relu(Load(ip[j]) * a[j] + b[j])); });
    }
  }
}

// Backward, first pass, over one line: the gradient reaching each window's maximum through ReLU
// (g), summed per channel into dsum, and g * (x at the maximum - mean) into dxsum.
template <bool kPool, typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void GradSumsLinePortable(
    const T* __restrict x, const T* __restrict dout, const float* __restrict a,
    const float* __restrict b, const float* __restrict mean, const NhwcShape& s, int64_t line,
    float* __restrict dsum, float* __restrict dxsum) {
  const int64_t c = s.c;
  const T* __restrict d = dout + s.Out(line);
  if constexpr (kPool) {
    const PooledRows<const T> rows(x, s, line);
    const T* r0 = rows.r0;
    const T* r1 = rows.r1;
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      const T* __restrict p0 = r0 + 2 * pw * c;
      const T* __restrict p1 = r1 + 2 * pw * c;
      const T* __restrict dp = d + pw * c;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const Window<T> win(p0, p1, c, j, a[j], b[j]);
            const float gd = Load(dp[j]);
            const float g = Passes(win.m) ? gd : 0.0f;
            dsum[j] += g;
            dxsum[j] += g * (win.xm - mean[j]);
          });
    }
  } else {
    const T* __restrict in = x + s.Out(line);
    for (int64_t p = 0; p < s.pw; ++p) {
      const T* __restrict ip = in + p * c;
      const T* __restrict dp = d + p * c;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const float xv = Load(ip[j]);
            const float gd = Load(dp[j]);
            const float g = Passes(xv * a[j] + b[j]) ? gd : 0.0f;
            dsum[j] += g;
            dxsum[j] += g * (xv - mean[j]);
          });
    }
  }
}

// Backward, second pass, over one line: the input gradient of every element the line covers.
template <bool kPool, typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void InputGradLinePortable(
    const T* __restrict x, const T* __restrict dout, T* __restrict dx, const float* __restrict a,
    const float* __restrict b, const float* __restrict k_dy, const float* __restrict k_x,
    const float* __restrict k_0, const NhwcShape& s, int64_t line) {
  const int64_t c = s.c;
  const T* __restrict d = dout + s.Out(line);
  if constexpr (kPool) {
    const PooledRows<const T> rows(x, s, line);
    const PooledRows<T> grads(dx, s, line);
    const T* r0 = rows.r0;
    const T* r1 = rows.r1;
    T* g0 = grads.r0;
    T* g1 = grads.r1;
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      const int64_t at = 2 * pw * c;
      const T* __restrict p0 = r0 + at;
      const T* __restrict p1 = r1 + at;
      // Four pointers, each restrict: through one, GCC cannot rule out q[j] and q[c + j] meeting
      // for some c, and leaves the loop scalar.
      T* __restrict q00 = g0 + at;
      T* __restrict q01 = g0 + at + c;
      T* __restrict q10 = g1 + at;
      T* __restrict q11 = g1 + at + c;
      const T* __restrict dp = d + pw * c;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const Window<T> win(p0, p1, c, j, a[j], b[j]);
            const float gd = Load(dp[j]);
            const float g = k_dy[j] * (Passes(win.m) ? gd : 0.0f);  // no load under the condition
            const float base0 = k_x[j] * win.x[0] + k_0[j], base1 = k_x[j] * win.x[1] + k_0[j];
            const float base2 = k_x[j] * win.x[2] + k_0[j], base3 = k_x[j] * win.x[3] + k_0[j];
            Store(q00[j], win.km == 0.0f ? base0 + g : base0);
            Store(q01[j], win.km == 1.0f ? base1 + g : base1);
            Store(q10[j], win.km == 2.0f ? base2 + g : base2);
            Store(q11[j], win.km == 3.0f ? base3 + g : base3);
          });
    }
    // An odd width leaves the rows' last pixel out of every window: no dy, only the mean terms.
    if (s.w % 2 != 0) {
      const int64_t at = (s.w - 1) * c;
      for (int r = 0; r < 2; ++r) {
        const T* __restrict p = (r == 0 ? r0 : r1) + at;
        T* __restrict q = (r == 0 ? g0 : g1) + at;
        ForEach(
            c, [=](int64_t j)
                   __attribute__((always_inline)) { Store(q[j], k_x[j] * Load(p[j]) + k_0[j]); });
      }
    }
  } else {
    const T* __restrict in = x + s.Out(line);
    T* __restrict gx = dx + s.Out(line);
    for (int64_t p = 0; p < s.pw; ++p) {
      const T* __restrict ip = in + p * c;
      const T* __restrict dp = d + p * c;
      T* __restrict gp = gx + p * c;
      ForEach(
          c, [=](int64_t j) __attribute__((always_inline)) {
            const float xv = Load(ip[j]);
            const float gd = Load(dp[j]);
            const float g = k_dy[j] * (Passes(xv * a[j] + b[j]) ? gd : 0.0f);
            Store(gp[j], k_x[j] * xv + k_0[j] + g);
          });
    }
  }
}

template <typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void InputGradUncoveredPortable(
    const T* __restrict x, T* __restrict dx, const float* __restrict k_x,
    const float* __restrict k_0, int64_t pixels, int64_t c) {
  for (int64_t p = 0; p < pixels; ++p) {
    const T* __restrict xp = x + p * c;
    T* __restrict gp = dx + p * c;
    ForEach(
        c, [=](int64_t j)
               __attribute__((always_inline)) { Store(gp[j], k_x[j] * Load(xp[j]) + k_0[j]); });
  }
}

// ImageMean for c channels of pixels `stride` apart; `sum` is scratch for c floats.
template <typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void ImageMeanPortable(
    const T* __restrict x, T* __restrict out, int64_t pixels, int64_t c, int64_t stride,
    float* __restrict sum) {
  ForEach(
      c, [=](int64_t j) __attribute__((always_inline)) { sum[j] = 0.0f; });
  for (int64_t p = 0; p < pixels; ++p) {
    const T* __restrict px = x + p * stride;
    ForEach(
        c, [=](int64_t j) __attribute__((always_inline)) { sum[j] += Load(px[j]); });
  }
  const auto n = static_cast<float>(pixels);  // divided, not multiplied: mean()'s bits
  ForEach(
      c, [=](int64_t j) __attribute__((always_inline)) { Store(out[j], sum[j] / n); });
}

template <typename T>
__attribute__((target_clones("avx512f", "avx2", "default"))) void ImageMeanGradPortable(
    const T* __restrict dout, T* __restrict dx, int64_t pixels, int64_t c) {
  const auto n = static_cast<float>(pixels);
  for (int64_t p = 0; p < pixels; ++p) {
    T* __restrict px = dx + p * c;
    ForEach(
        c, [=](int64_t j) __attribute__((always_inline)) { Store(px[j], Load(dout[j]) / n); });
  }
}

std::atomic<bool>& Avx512On() {
  static std::atomic<bool> on{avx512::Supported()};
  return on;
}

}  // namespace

bool NormPoolAvx512Enabled() { return Avx512On().load(std::memory_order_relaxed); }
void EnableNormPoolAvx512(bool on) { Avx512On().store(on && avx512::Supported()); }

template <typename T>
void ShiftedSums(const T* x, const float* ref, int64_t r0, int64_t r1, int64_t c, double* sum,
                 double* sumsq) {
  float s[kStatChannels], q[kStatChannels];
  for (int64_t c0 = 0; c0 < c; c0 += kStatChannels) {
    const int64_t cn = std::min(kStatChannels, c - c0);
    // As many vectors as the block's channels need: 1-4.
    if (NormPoolAvx512Enabled()) {
      avx512::ShiftedSums(x + c0, ref + c0, r0, r1, cn, c, sum + c0, sumsq + c0);
    } else {
      ShiftedSumsPortable(x + c0, ref + c0, r0, r1, cn, c, s, q, sum + c0, sumsq + c0);
    }
  }
}

template <typename T>
void ForwardLine(const T* x, T* out, const NormCoeffs& k, const NhwcShape& s, int64_t line) {
  if (s.pool && NormPoolAvx512Enabled()) return avx512::ForwardPooled(x, out, k, s, line);
  s.pool ? ForwardLinePortable<true>(x, out, k.scale, k.shift, s, line)
         : ForwardLinePortable<false>(x, out, k.scale, k.shift, s, line);
}

template <typename T>
void GradSumsLine(const T* x, const T* dout, const NormCoeffs& k, const NhwcShape& s, int64_t line,
                  float* dsum, float* dxsum) {
  if (s.pool && NormPoolAvx512Enabled()) {
    return avx512::GradSumsPooled(x, dout, k, s, line, dsum, dxsum);
  }
  s.pool ? GradSumsLinePortable<true>(x, dout, k.scale, k.shift, k.mean, s, line, dsum, dxsum)
         : GradSumsLinePortable<false>(x, dout, k.scale, k.shift, k.mean, s, line, dsum, dxsum);
}

template <typename T>
void InputGradLine(const T* x, const T* dout, T* dx, const NormCoeffs& k, const NhwcShape& s,
                   int64_t line) {
  if (s.pool && NormPoolAvx512Enabled()) return avx512::InputGradPooled(x, dout, dx, k, s, line);
  s.pool
      ? InputGradLinePortable<true>(x, dout, dx, k.scale, k.shift, k.k_dy, k.k_x, k.k_0, s, line)
      : InputGradLinePortable<false>(x, dout, dx, k.scale, k.shift, k.k_dy, k.k_x, k.k_0, s, line);
}

template <typename T>
void InputGradUncovered(const T* x, T* dx, const NormCoeffs& k, int64_t pixels, int64_t c) {
  InputGradUncoveredPortable(x, dx, k.k_x, k.k_0, pixels, c);
}

template <typename T>
void ImageMean(const T* x, T* out, int64_t pixels, int64_t c) {
  float sum[kStatChannels];
  for (int64_t c0 = 0; c0 < c; c0 += kStatChannels) {
    ImageMeanPortable(x + c0, out + c0, pixels, std::min(kStatChannels, c - c0), c, sum);
  }
}

template <typename T>
void ImageMeanGrad(const T* dout, T* dx, int64_t pixels, int64_t c) {
  ImageMeanGradPortable(dout, dx, pixels, c);
}

#define SIFT_INSTANTIATE(T)                                                                       \
  template void ShiftedSums(const T*, const float*, int64_t, int64_t, int64_t, double*, double*); \
  template void ForwardLine(const T*, T*, const NormCoeffs&, const NhwcShape&, int64_t);          \
  template void GradSumsLine(const T*, const T*, const NormCoeffs&, const NhwcShape&, int64_t,    \
                             float*, float*);                                                     \
  template void InputGradLine(const T*, const T*, T*, const NormCoeffs&, const NhwcShape&,        \
                              int64_t);                                                           \
  template void InputGradUncovered(const T*, T*, const NormCoeffs&, int64_t, int64_t);            \
  template void ImageMean(const T*, T*, int64_t, int64_t);                                        \
  template void ImageMeanGrad(const T*, T*, int64_t, int64_t);
SIFT_INSTANTIATE(float)
SIFT_INSTANTIATE(uint16_t)
#undef SIFT_INSTANTIATE

}  // namespace sift::worker

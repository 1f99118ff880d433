#include "worker/trainer/kernels/norm_pool_avx512.h"

#include <immintrin.h>

#include <algorithm>

// Built with -ffp-contract=off, as the portable loops: no fused multiply-adds, so both give the
// same bits and backward's recomputed window maxima are forward's.

namespace sift::worker::avx512 {
namespace {

// The pooled lines, 16 channels per vector, the last block masked. GCC's vectorization of the
// portable loops turns the window's masks into bit juggling: cnn_block_bench, fused forward +
// backward, portable 7.7-8.5 ms fp32 and 33 ms bf16, these 4.3-4.5 ms and 2.6 ms (LibTorch's
// three ops: 11.5 and 10 ms).

// GCC 12 reports the masked intrinsics' internal _mm512_undefined_*() as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SIFT_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline
#define SIFT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// Full blocks load and store unmasked: masked accesses are slow on AMD's Zen (cnn_block_bench
// fp32: 8.1 ms with masks on every access, 4.3 ms without).
constexpr __mmask16 kAllLanes = 0xFFFF;

SIFT_AVX512_INLINE __m512 LoadV(const float* p, __mmask16 k) {
  return k == kAllLanes ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p);
}
SIFT_AVX512_INLINE __m512 LoadV(const uint16_t* p, __mmask16 k) {
  const __m256i half = k == kAllLanes ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                      : _mm256_maskz_loadu_epi16(k, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}
SIFT_AVX512_INLINE void StoreV(float* p, __mmask16 k, __m512 v) {
  k == kAllLanes ? _mm512_storeu_ps(p, v) : _mm512_mask_storeu_ps(p, k, v);
}
// ToBf16Bits, 16 at a time: round to nearest even, NaN to 0x7FC0.
SIFT_AVX512_INLINE void StoreV(uint16_t* p, __mmask16 k, __m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i bits =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  bits = _mm512_mask_mov_epi32(bits, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                               _mm512_set1_epi32(0x7FC0));
  const __m256i half = _mm512_cvtepi32_epi16(bits);
  if (k == kAllLanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), half);
  } else {
    _mm256_mask_storeu_epi16(p, k, half);
  }
}

SIFT_AVX512_INLINE __m512 AffineV(__m512 x, __m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_mul_ps(x, a), b);
}

// The lanes of a channel block that starts `left` channels before the end.
__mmask16 Lanes(int64_t left) {
  return left >= 16 ? kAllLanes : static_cast<__mmask16>((1u << left) - 1u);
}

// Window, 16 channels at once; at[e]: the lanes whose maximum is element e.
struct WindowV {
  __m512 x[4], m, xm;
  __mmask16 at[4];
};

template <typename T>
SIFT_AVX512_INLINE void MakeWindow(WindowV& w, const T* p0, const T* p1, int64_t c, __mmask16 k,
                                   __m512 a, __m512 b) {
  w.x[0] = LoadV(p0, k);
  w.x[1] = LoadV(p0 + c, k);
  w.x[2] = LoadV(p1, k);
  w.x[3] = LoadV(p1 + c, k);
  w.m = AffineV(w.x[0], a, b);
  w.xm = w.x[0];
  w.at[0] = kAllLanes;
#pragma GCC unroll 4
  for (int e = 1; e < 4; ++e) {
    const __m512 v = AffineV(w.x[e], a, b);
    const __mmask16 take =
        _mm512_cmp_ps_mask(v, w.m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    w.m = _mm512_mask_mov_ps(w.m, take, v);
    w.xm = _mm512_mask_mov_ps(w.xm, take, w.x[e]);
#pragma GCC unroll 4
    for (int f = 0; f < e; ++f) w.at[f] = static_cast<__mmask16>(w.at[f] & ~take);
    w.at[e] = take;
  }
}

// Lanes where ReLU passes the maximum (not <= 0; NaN passes).
SIFT_AVX512_INLINE __mmask16 PassesV(__m512 m) {
  return static_cast<__mmask16>(~_mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_LE_OQ));
}

template <typename T>
SIFT_AVX512 void ForwardPooledImpl(const T* x, T* out, const NormCoeffs& k, const NhwcShape& s,
                                   int64_t line) {
  const int64_t c = s.c;
  const PooledRows<const T> rows(x, s, line);
  T* o = out + s.Out(line);
  for (int64_t c0 = 0; c0 < c; c0 += 16) {
    const __mmask16 lanes = Lanes(c - c0);
    const __m512 a = LoadV(k.scale + c0, lanes), b = LoadV(k.shift + c0, lanes);
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      WindowV w;
      MakeWindow(w, rows.r0 + 2 * pw * c + c0, rows.r1 + 2 * pw * c + c0, c, lanes, a, b);
      const __mmask16 le = _mm512_cmp_ps_mask(w.m, _mm512_setzero_ps(), _CMP_LE_OQ);
      StoreV(o + pw * c + c0, lanes, _mm512_mask_mov_ps(w.m, le, _mm512_setzero_ps()));
    }
  }
}

template <typename T>
SIFT_AVX512 void GradSumsPooledImpl(const T* x, const T* dout, const NormCoeffs& k,
                                    const NhwcShape& s, int64_t line, float* dsum, float* dxsum) {
  const int64_t c = s.c;
  const PooledRows<const T> rows(x, s, line);
  const T* d = dout + s.Out(line);
  for (int64_t c0 = 0; c0 < c; c0 += 16) {
    const __mmask16 lanes = Lanes(c - c0);
    const __m512 a = LoadV(k.scale + c0, lanes), b = LoadV(k.shift + c0, lanes);
    const __m512 mean = LoadV(k.mean + c0, lanes);
    __m512 sum = LoadV(dsum + c0, lanes), xsum = LoadV(dxsum + c0, lanes);
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      WindowV w;
      MakeWindow(w, rows.r0 + 2 * pw * c + c0, rows.r1 + 2 * pw * c + c0, c, lanes, a, b);
      const __m512 g = _mm512_maskz_mov_ps(PassesV(w.m), LoadV(d + pw * c + c0, lanes));
      sum = _mm512_add_ps(sum, g);
      xsum = _mm512_add_ps(xsum, _mm512_mul_ps(g, _mm512_sub_ps(w.xm, mean)));
    }
    StoreV(dsum + c0, lanes, sum);
    StoreV(dxsum + c0, lanes, xsum);
  }
}

template <typename T>
SIFT_AVX512 void InputGradPooledImpl(const T* x, const T* dout, T* dx, const NormCoeffs& k,
                                     const NhwcShape& s, int64_t line) {
  const int64_t c = s.c;
  const PooledRows<const T> rows(x, s, line);
  const PooledRows<T> grads(dx, s, line);
  const T* d = dout + s.Out(line);
  for (int64_t c0 = 0; c0 < c; c0 += 16) {
    const __mmask16 lanes = Lanes(c - c0);
    const __m512 a = LoadV(k.scale + c0, lanes), b = LoadV(k.shift + c0, lanes);
    const __m512 k_dy = LoadV(k.k_dy + c0, lanes), k_x = LoadV(k.k_x + c0, lanes);
    const __m512 k_0 = LoadV(k.k_0 + c0, lanes);
    for (int64_t pw = 0; pw < s.pw; ++pw) {
      const int64_t at = 2 * pw * c + c0;
      WindowV w;
      MakeWindow(w, rows.r0 + at, rows.r1 + at, c, lanes, a, b);
      const __m512 g =
          _mm512_mul_ps(k_dy, _mm512_maskz_mov_ps(PassesV(w.m), LoadV(d + pw * c + c0, lanes)));
      T* q[4] = {grads.r0 + at, grads.r0 + at + c, grads.r1 + at, grads.r1 + at + c};
#pragma GCC unroll 4
      for (int e = 0; e < 4; ++e) {
        const __m512 base = _mm512_add_ps(_mm512_mul_ps(k_x, w.x[e]), k_0);
        StoreV(q[e], lanes, _mm512_mask_add_ps(base, w.at[e], base, g));
      }
    }
    if (s.w % 2 != 0) {  // the rows' last pixel is in no window
      const int64_t at = (s.w - 1) * c + c0;
      for (int r = 0; r < 2; ++r) {
        const T* p = (r == 0 ? rows.r0 : rows.r1) + at;
        T* q = (r == 0 ? grads.r0 : grads.r1) + at;
        StoreV(q, lanes, _mm512_add_ps(_mm512_mul_ps(k_x, LoadV(p, lanes)), k_0));
      }
    }
  }
}

// ShiftedSums for up to 16 * kVectors channels of rows `stride` apart, the sums in registers.
template <int kVectors, typename T>
SIFT_AVX512 void ShiftedSumsImpl(const T* x, const float* ref, int64_t r0, int64_t r1, int64_t c,
                                 int64_t stride, double* sum, double* sumsq) {
  __mmask16 lanes[kVectors];
  __m512 mean[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    lanes[v] = Lanes(c - 16 * v);
    mean[v] = LoadV(ref + 16 * v, lanes[v]);
  }
  float s[16 * kVectors], q[16 * kVectors];
  for (int64_t b = r0; b < r1; b += kBlockRows) {
    __m512 sv[kVectors], qv[kVectors];
    for (int v = 0; v < kVectors; ++v) sv[v] = qv[v] = _mm512_setzero_ps();
    for (int64_t r = b; r < std::min(b + kBlockRows, r1); ++r) {
      const T* row = x + r * stride;
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        const __m512 d = _mm512_sub_ps(LoadV(row + 16 * v, lanes[v]), mean[v]);
        sv[v] = _mm512_add_ps(sv[v], d);
        qv[v] = _mm512_add_ps(qv[v], _mm512_mul_ps(d, d));
      }
    }
    for (int v = 0; v < kVectors; ++v) {
      _mm512_storeu_ps(s + 16 * v, sv[v]);
      _mm512_storeu_ps(q + 16 * v, qv[v]);
    }
    for (int64_t j = 0; j < c; ++j) {
      sum[j] += s[j];
      sumsq[j] += q[j];
    }
  }
}

#undef SIFT_AVX512
#undef SIFT_AVX512_INLINE

}  // namespace

bool Supported() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

template <typename T>
void ForwardPooled(const T* x, T* out, const NormCoeffs& k, const NhwcShape& s, int64_t line) {
  ForwardPooledImpl(x, out, k, s, line);
}

template <typename T>
void GradSumsPooled(const T* x, const T* dout, const NormCoeffs& k, const NhwcShape& s,
                    int64_t line, float* dsum, float* dxsum) {
  GradSumsPooledImpl(x, dout, k, s, line, dsum, dxsum);
}

template <typename T>
void InputGradPooled(const T* x, const T* dout, T* dx, const NormCoeffs& k, const NhwcShape& s,
                     int64_t line) {
  InputGradPooledImpl(x, dout, dx, k, s, line);
}

template <typename T>
void ShiftedSums(const T* x, const float* ref, int64_t r0, int64_t r1, int64_t c, int64_t stride,
                 double* sum, double* sumsq) {
  // As many vectors as the channels need: the sums stay in registers.
  const auto impl = c <= 16   ? ShiftedSumsImpl<1, T>
                    : c <= 32 ? ShiftedSumsImpl<2, T>
                    : c <= 48 ? ShiftedSumsImpl<3, T>
                              : ShiftedSumsImpl<4, T>;
  impl(x, ref, r0, r1, c, stride, sum, sumsq);
}

#define SIFT_INSTANTIATE(T)                                                                      \
  template void ForwardPooled(const T*, T*, const NormCoeffs&, const NhwcShape&, int64_t);       \
  template void GradSumsPooled(const T*, const T*, const NormCoeffs&, const NhwcShape&, int64_t, \
                               float*, float*);                                                  \
  template void InputGradPooled(const T*, const T*, T*, const NormCoeffs&, const NhwcShape&,     \
                                int64_t);                                                        \
  template void ShiftedSums(const T*, const float*, int64_t, int64_t, int64_t, int64_t, double*, \
                            double*);
SIFT_INSTANTIATE(float)
SIFT_INSTANTIATE(uint16_t)
#undef SIFT_INSTANTIATE

}  // namespace sift::worker::avx512

// The loops behind NormPoolRelu (norm_pool_relu.h), on NHWC arrays of float or bf16 bits
// (uint16_t). Torch-free. Each "line" function handles one pooled output row, so callers split
// lines over threads; sums come back per line, for callers to add in a fixed order.
#pragma once

#include <cstdint>

namespace sift::worker {

// Shape of an NHWC array [n, h, w, c] and of its pooled output [n, ph, pw, c]; a line is one
// pooled output row: input rows 2*ph and 2*ph + 1 when pooling, row ph when not.
struct NhwcShape {
  int64_t n, c, h, w, ph, pw;
  bool pool;

  int64_t Lines() const { return n * ph; }
  int64_t Count() const { return n * h * w; }  // elements per channel
  // First element of input row `row` of image i, and of pooled row `line`.
  int64_t In(int64_t i, int64_t row) const { return (i * h + row) * w * c; }
  int64_t Out(int64_t line) const { return line * pw * c; }
};

// A pooled line's two input rows: image i's rows 2*ph and 2*ph + 1.
template <typename T>
struct PooledRows {
  T* r0;
  T* r1;
  PooledRows(T* base, const NhwcShape& s, int64_t line)
      : r0(base + s.In(line / s.ph, 2 * (line % s.ph))), r1(r0 + s.w * s.c) {}
};

// Per-channel arrays of length c. Batch norm is y = x * scale + shift; backward's input gradient
// is dx = k_dy * dy + k_x * x + k_0, dy being the gradient at the norm's output.
struct NormCoeffs {
  const float *scale, *shift, *mean, *k_dy, *k_x, *k_0;
};

// Adds the per-channel sums of (x - ref) and (x - ref)^2 over rows [r0, r1) of the [rows, c]
// array to sum and sumsq; `ref`, a rough mean, keeps the squares' cancellation small.
template <typename T>
void ShiftedSums(const T* x, const float* ref, int64_t r0, int64_t r1, int64_t c, double* sum,
                 double* sumsq);

// out's line = relu(max over each 2x2 window (or the pixel) of x * scale + shift).
template <typename T>
void ForwardLine(const T* x, T* out, const NormCoeffs& k, const NhwcShape& s, int64_t line);

// Adds, per channel, the gradient g reaching each window's maximum through ReLU to dsum and
// g * (x at the maximum - mean) to dxsum (both length c, fp32).
template <typename T>
void GradSumsLine(const T* x, const T* dout, const NormCoeffs& k, const NhwcShape& s, int64_t line,
                  float* dsum, float* dxsum);

// dx for every input element the line covers (with an odd width, the rows' last pixel too).
template <typename T>
void InputGradLine(const T* x, const T* dout, T* dx, const NormCoeffs& k, const NhwcShape& s,
                   int64_t line);

// dx = k_x * x + k_0 for `pixels` pixels no window covers (an odd height's last row).
template <typename T>
void InputGradUncovered(const T* x, T* dx, const NormCoeffs& k, int64_t pixels, int64_t c);

// Global average pooling of one NHWC image: out[j] = mean over `pixels` of x[., j] (fp32 sums);
// and its backward, dx[p, j] = dout[j] / pixels.
template <typename T>
void ImageMean(const T* x, T* out, int64_t pixels, int64_t c);
template <typename T>
void ImageMeanGrad(const T* dout, T* dx, int64_t pixels, int64_t c);

// Whether the pooled lines run hand-vectorized AVX-512 code (on CPUs with AVX-512 F, BW and VL)
// rather than the portable loops; tests turn it off to check the portable loops too.
bool NormPoolAvx512Enabled();
void EnableNormPoolAvx512(bool on);

}  // namespace sift::worker

// Hand-vectorized AVX-512 versions of norm_pool_kernels' pooled lines and batch statistics, for
// CPUs with AVX-512 F, BW and VL (Supported()); norm_pool_kernels.cc picks them or its portable
// loops. Same arithmetic in the same order: the same bits. Torch-free.
#pragma once

#include <cstdint>

#include "worker/trainer/kernels/norm_pool_kernels.h"

namespace sift::worker::avx512 {

// Rows summed in fp32 before the sums fold into double, here and in the portable loops.
inline constexpr int64_t kBlockRows = 64;
// Channels per ShiftedSums call.
inline constexpr int64_t kMaxSumChannels = 64;

bool Supported();

template <typename T>
void ForwardPooled(const T* x, T* out, const NormCoeffs& k, const NhwcShape& s, int64_t line);
template <typename T>
void GradSumsPooled(const T* x, const T* dout, const NormCoeffs& k, const NhwcShape& s,
                    int64_t line, float* dsum, float* dxsum);
template <typename T>
void InputGradPooled(const T* x, const T* dout, T* dx, const NormCoeffs& k, const NhwcShape& s,
                     int64_t line);
// ShiftedSums (norm_pool_kernels.h) over c <= kMaxSumChannels channels of rows `stride` apart.
template <typename T>
void ShiftedSums(const T* x, const float* ref, int64_t r0, int64_t r1, int64_t c, int64_t stride,
                 double* sum, double* sumsq);

}  // namespace sift::worker::avx512

// Row-major matrix products for the trainer's own layers (fused_linear.h): fp32, and bf16 inputs
// with fp32 results.
#pragma once

#include <torch/torch.h>

namespace sift::worker {

// c = op(a) @ op(b), op transposing when asked; a, b, c contiguous float CPU matrices, c sized.
// Runs oneDNN's sgemm when LibTorch's libdnnl is loaded (Debian's LibTorch links it as a shared
// library), else at::mm_out. For this trainer's shapes oneDNN is faster than OpenBLAS, which
// LibTorch 1.13 uses for every fp32 matmul on the CPU (see bench/worker/README.md).
void Sgemm(bool trans_a, bool trans_b, const torch::Tensor& a, const torch::Tensor& b,
           torch::Tensor& c);

// Whether Sgemm runs oneDNN (for the benchmark's and tests' logs).
bool SgemmUsesOneDnn();

// As Sgemm with a and b contiguous bfloat16 and c float: oneDNN's gemm_bf16bf16f32, which
// accumulates in fp32. Only where GemmBf16Available().
void GemmBf16(bool trans_a, bool trans_b, const torch::Tensor& a, const torch::Tensor& b,
              torch::Tensor& c);

// Whether GemmBf16 can run: oneDNN's bf16 gemm is loaded and the CPU has AVX512-BF16 (elsewhere
// oneDNN converts to fp32 inside and bf16 gains nothing). SIFT_NO_ONEDNN_BF16=1 turns it off,
// for A/B runs against the autocast layers.
bool GemmBf16Available();

}  // namespace sift::worker

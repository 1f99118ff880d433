// Row-major fp32 matrix product for the trainer's own layers (fused_linear.h).
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

}  // namespace sift::worker

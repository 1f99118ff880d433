// The CNN block's tail after each convolution: batch norm, a 2x2 max pool (optional), then ReLU,
// on a channels-last (NHWC) CPU tensor, as one autograd node with its own forward and backward.
//
// LibTorch 1.13 runs these as three ops, each with its own passes over the block's tensors
// forward and backward, and its bf16 kernels convert to fp32 inside, so in bf16 they cost what
// they cost in fp32. Here forward reads the convolution's output twice (statistics, then
// normalize-pool-ReLU into the pooled output) and backward twice (the parameter gradients' sums,
// then the input gradient), recomputing each window's maximum rather than storing the pool's
// indices or the norm's output, in the input's own precision. Benchmark CNN, both blocks,
// forward + backward (bench/worker/cnn_block_bench): LibTorch 11.5 ms fp32, 10 ms bf16; this
// 4.3 ms and 2.6 ms. The result equals batch_norm -> max_pool2d -> relu up to float rounding,
// and is bitwise repeatable for a given thread count.
#pragma once

#include <torch/torch.h>

namespace sift::worker {

// Whether NormPoolRelu handles these: a 4-d CPU float tensor laid out channels-last, or bfloat16
// on a CPU with AVX-512 (NormPoolAvx512Enabled()), and a batch norm with float affine parameters
// and running statistics; and SIFT_NO_FUSED_NORM
// unset (set, the plain ops run: for A/B benchmarks).
bool NormPoolReluApplies(const torch::Tensor& x, const torch::nn::BatchNorm2d& norm);

// relu(max_pool2d(norm(x), 2)) if `pool`, else relu(norm(x)); channels-last, x's dtype. In
// training mode it normalizes with the batch's statistics and updates the running ones, as
// BatchNorm2d::forward does; in eval mode it uses the running ones. Differentiable in x and in
// the norm's weight and bias.
torch::Tensor NormPoolRelu(const torch::Tensor& x, const torch::nn::BatchNorm2d& norm, bool pool);

// x.mean({2, 3}) for a channels-last CPU float or bfloat16 x: [n, c] in x's dtype, summed in
// fp32. LibTorch's mean backward materializes an expanded NCHW gradient, which the block's
// backward then copies to channels-last: 0.6 ms (fp32) to 1.6 ms (bf16) per step of the
// benchmark CNN for 0.8 M elements; this writes the channels-last gradient directly.
bool GlobalMeanApplies(const torch::Tensor& x);
torch::Tensor GlobalMean(const torch::Tensor& x);

}  // namespace sift::worker

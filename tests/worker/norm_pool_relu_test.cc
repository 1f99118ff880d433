#include "worker/trainer/kernels/norm_pool_relu.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/worker/test_util.h"
#include "worker/trainer/kernels/norm_pool_kernels.h"

namespace sift::worker {
namespace norm_pool_relu_test {

struct Case {
  std::vector<int64_t> shape;  // NCHW sizes; the tensor is laid out channels-last
  bool pool;
  std::string name;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {{6, 16, 10, 12}, true, "even 10x12, pooled"},
      {{5, 8, 7, 9}, true, "odd 7x9, pooled (last row and column in no window)"},
      {{4, 24, 3, 3}, false, "3x3, not pooled"},
      {{2, 80, 6, 4}, true, "80 channels: two statistics blocks, a masked vector tail"},
      {{1, 16, 4, 4}, true, "one image"},
  };
  return cases;
}

struct Result {
  torch::Tensor out, grad_x, grad_w, grad_b, running_mean, running_var, batches;
  std::vector<torch::Tensor> All() const {
    return {out, grad_x, grad_w, grad_b, running_mean, running_var, batches};
  }
};

// One forward and backward through a batch norm whose parameters are drawn (negative scales
// included, so the window maximum of the normalized values is not that of the inputs), on inputs
// far from zero mean (the statistics' cancellation), in `dtype`; fused or the plain ops.
Result ForwardBackward(const Case& c, bool fused, bool training, torch::Dtype dtype) {
  torch::manual_seed(11);
  const int64_t channels = c.shape[1];
  torch::nn::BatchNorm2d norm(channels);
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::randn({channels}));
    norm->bias.copy_(torch::randn({channels}));
    norm->running_mean.copy_(torch::randn({channels}));
    norm->running_var.copy_(torch::rand({channels}) + 0.5);
  }
  training ? norm->train() : norm->eval();
  auto x = (torch::randn(c.shape) * 3.0 + 20.0)
               .to(dtype)
               .contiguous(at::MemoryFormat::ChannelsLast)
               .requires_grad_(true);
  torch::Tensor out;
  if (fused) {
    out = NormPoolRelu(x, norm, c.pool);
  } else {
    // The reference runs in fp32 on the same (possibly bf16-rounded) inputs.
    auto y = norm->forward(x.to(torch::kFloat32));
    if (c.pool) y = torch::max_pool2d(y, 2);
    out = y.relu();
  }
  auto upstream = torch::randn(out.sizes());
  (out.to(torch::kFloat32) * upstream).sum().backward();
  return {out.detach().to(torch::kFloat32),
          x.grad().to(torch::kFloat32),
          norm->weight.grad(),
          norm->bias.grad(),
          norm->running_mean.clone(),
          norm->running_var.clone(),
          norm->num_batches_tracked.clone()};
}

void ExpectClose(const torch::Tensor& got, const torch::Tensor& want, double tol,
                 const std::string& what) {
  testing::ExpectMaxRelError(got, want, tol, what, /*min_scale=*/1.0);
}

void ExpectResultClose(const Result& got, const Result& want, double tol) {
  ExpectClose(got.out, want.out, tol, "output");
  ExpectClose(got.grad_x, want.grad_x, tol, "input gradient");
  ExpectClose(got.grad_w, want.grad_w, tol, "weight gradient");
  ExpectClose(got.grad_b, want.grad_b, tol, "bias gradient");
  ExpectClose(got.running_mean, want.running_mean, tol, "running mean");
  ExpectClose(got.running_var, want.running_var, tol, "running variance");
  EXPECT_TRUE(torch::equal(got.batches, want.batches)) << "num_batches_tracked";
}

// fp32: only rounding differs (statistics summed in another order, x * scale + shift for
// (x - mean) * invstd * weight + bias); largest gap measured 3.0e-6 of the tensor's largest
// magnitude (weight gradient). The bound, 5e-5, leaves 17x room; dropping the input gradient's
// batch term (x - mean) puts it off by 5-80%.
TEST(NormPoolReluTest, MatchesBatchNormMaxPoolReluInFp32) {
  for (const Case& c : Cases()) {
    for (bool training : {true, false}) {
      SCOPED_TRACE(c.name + (training ? ", training" : ", eval"));
      const Result plain = ForwardBackward(c, /*fused=*/false, training, torch::kFloat32);
      const Result fused = ForwardBackward(c, /*fused=*/true, training, torch::kFloat32);
      ExpectResultClose(fused, plain, 5e-5);
      // The pool picks the same element and ReLU zeroes the same places.
      EXPECT_TRUE(torch::equal(fused.out == 0, plain.out == 0));
      EXPECT_TRUE(torch::equal(fused.grad_x == 0, plain.grad_x == 0));
    }
  }
}

// bf16 inputs, output and input gradient (the statistics, parameters and their gradients in fp32)
// against fp32 math on the same bf16 inputs: the output and input gradient are rounded to bf16
// (2^-9 relative), and a rounded output can tie two window elements the reference tells apart.
// Largest gap measured 0.71% of the tensor's largest magnitude (input gradient); the bound,
// 2%, leaves 2.8x room (dropping the batch term above: 4.7%).
TEST(NormPoolReluTest, MatchesFp32MathInBf16) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Result plain = ForwardBackward(c, /*fused=*/false, /*training=*/true, torch::kBFloat16);
    const Result fused = ForwardBackward(c, /*fused=*/true, /*training=*/true, torch::kBFloat16);
    ExpectResultClose(fused, plain, 2e-2);
  }
}

TEST(NormPoolReluTest, RepeatsBitwiseWithTwoThreads) {
  const int before = torch::get_num_threads();
  torch::set_num_threads(2);
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const auto a = ForwardBackward(Cases()[1], true, true, dtype).All();
    const auto b = ForwardBackward(Cases()[1], true, true, dtype).All();
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
  }
  torch::set_num_threads(before);
}

// CPUs without AVX-512 run the portable loops; they do the same arithmetic in the same order
// (no fused multiply-adds in either), so on this machine both give the same bits.
TEST(NormPoolReluTest, PortableLoopsGiveTheSameBits) {
  if (!NormPoolAvx512Enabled()) {
    GTEST_SKIP() << "no AVX-512 here: the tests above ran the portable loops";
  }
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(c.name);
      const auto fast = ForwardBackward(c, true, true, dtype).All();
      EnableNormPoolAvx512(false);
      const auto portable = ForwardBackward(c, true, true, dtype).All();
      EnableNormPoolAvx512(true);
      for (size_t i = 0; i < fast.size(); ++i) {
        EXPECT_TRUE(torch::equal(fast[i], portable[i])) << "tensor " << i;
      }
    }
  }
}

// GlobalMean against x.mean({2, 3}): the same sums in another order, so rounding only. Largest
// gap measured: 2.0e-7 of the largest magnitude in fp32 (bound 1e-6), 0.52% in bf16, one
// rounding step of a bf16 output (bound 2%). The gradient divides as mean's does: the same bits
// in fp32.
TEST(NormPoolReluTest, GlobalMeanMatchesMean) {
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    torch::manual_seed(5);
    auto x = torch::randn({6, 24, 7, 5})
                 .to(dtype)
                 .contiguous(at::MemoryFormat::ChannelsLast)
                 .requires_grad_(true);
    auto y = x.detach().clone().requires_grad_(true);
    ASSERT_TRUE(GlobalMeanApplies(x));
    auto upstream = torch::randn({6, 24}).to(dtype);
    auto got = GlobalMean(x);
    auto want = y.mean({2, 3});
    EXPECT_EQ(got.scalar_type(), dtype);
    got.backward(upstream);
    want.backward(upstream);
    const double tol = dtype == torch::kFloat32 ? 1e-6 : 2e-2;
    ExpectClose(got.to(torch::kFloat32), want.to(torch::kFloat32), tol, "mean");
    EXPECT_TRUE(x.grad().is_contiguous(at::MemoryFormat::ChannelsLast));
    if (dtype == torch::kFloat32) {
      EXPECT_TRUE(torch::equal(x.grad(), y.grad()));
    } else {
      ExpectClose(x.grad().to(torch::kFloat32), y.grad().to(torch::kFloat32), tol, "gradient");
    }
  }
  EXPECT_FALSE(GlobalMeanApplies(torch::randn({2, 4, 3, 3})));  // NCHW
}

TEST(NormPoolReluTest, AppliesToChannelsLastCpuFloatOrBf16) {
  torch::nn::BatchNorm2d norm(4);
  const auto x = torch::randn({2, 4, 6, 6});
  EXPECT_FALSE(NormPoolReluApplies(x, norm));  // NCHW
  const auto nhwc = x.contiguous(at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(NormPoolReluApplies(nhwc, norm));
  EXPECT_EQ(NormPoolReluApplies(nhwc.to(torch::kBFloat16), norm), NormPoolAvx512Enabled());
  EXPECT_FALSE(NormPoolReluApplies(nhwc.to(torch::kFloat64), norm));
  torch::nn::BatchNorm2d frozen(torch::nn::BatchNorm2dOptions(4).track_running_stats(false));
  EXPECT_FALSE(NormPoolReluApplies(nhwc, frozen));
}

}  // namespace norm_pool_relu_test
}  // namespace sift::worker

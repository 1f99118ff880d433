#include "worker/trainer/fused_linear.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "worker/trainer/sgemm.h"

namespace sift::worker {
namespace {

// Fused and plain layers sum the products in different orders (oneDNN vs OpenBLAS blocking,
// the bias-gradient sum in row order vs ATen's cascade), so they differ by rounding: the largest
// gap measured here is 3.4e-7 of the tensor's largest magnitude (output, 64 x 100 x 48; weight
// and bias gradients 2.6e-7). The bound, 1e-5 of max(largest magnitude, 1), leaves 30x room; a
// wrong transposition, a missing bias or a wrong mask is off by O(1).
constexpr double kTol = 1e-5;

void ExpectClose(const torch::Tensor& got, const torch::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double err = (got - want).abs().max().item<double>();
  const double scale = want.abs().max().item<double>();
  EXPECT_LE(err, kTol * std::max(scale, 1.0)) << what << ": max |fused - plain| " << err;
}

TEST(SgemmTest, MatchesMatmulForEveryTransposition) {
  torch::manual_seed(1);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // op(a) is [37, 53], op(b) is [53, 29]; odd sizes leave vector tails.
      auto a = ta ? torch::randn({53, 37}) : torch::randn({37, 53});
      auto b = tb ? torch::randn({29, 53}) : torch::randn({53, 29});
      auto c = torch::empty({37, 29});
      Sgemm(ta, tb, a, b, c);
      ExpectClose(c, torch::mm(ta ? a.t() : a, tb ? b.t() : b), "sgemm");
    }
  }
}

struct Result {
  torch::Tensor out, grad_x, grad_w, grad_b;
};

// Forward and backward of one layer on fixed inputs; the loss weights each output differently
// so every gradient element matters.
Result ForwardBackward(bool fused, bool relu) {
  torch::manual_seed(2);
  torch::nn::Linear layer(100, 48);
  auto x = torch::randn({64, 100}).requires_grad_(true);
  auto upstream = torch::randn({64, 48});
  auto out = fused ? FusedLinear(x, layer, relu)
                   : (relu ? layer->forward(x).relu() : layer->forward(x));
  (out * upstream).sum().backward();
  return {out.detach(), x.grad(), layer->weight.grad(), layer->bias.grad()};
}

TEST(FusedLinearTest, MatchesLinearAndRelu) {
  for (bool relu : {true, false}) {
    SCOPED_TRACE(relu ? "relu" : "no relu");
    const Result plain = ForwardBackward(/*fused=*/false, relu);
    const Result fused = ForwardBackward(/*fused=*/true, relu);
    ExpectClose(fused.out, plain.out, "output");
    ExpectClose(fused.grad_x, plain.grad_x, "input gradient");
    ExpectClose(fused.grad_w, plain.grad_w, "weight gradient");
    ExpectClose(fused.grad_b, plain.grad_b, "bias gradient");
    if (relu) {  // the mask is the same: exact zeros in the same places
      EXPECT_TRUE(torch::equal(fused.out == 0, plain.out == 0));
    }
  }
}

TEST(FusedLinearTest, RepeatsBitwiseWithTwoThreads) {
  const int before = torch::get_num_threads();
  torch::set_num_threads(2);
  const Result a = ForwardBackward(/*fused=*/true, /*relu=*/true);
  const Result b = ForwardBackward(/*fused=*/true, /*relu=*/true);
  torch::set_num_threads(before);
  EXPECT_TRUE(torch::equal(a.out, b.out));
  EXPECT_TRUE(torch::equal(a.grad_x, b.grad_x));
  EXPECT_TRUE(torch::equal(a.grad_w, b.grad_w));
  EXPECT_TRUE(torch::equal(a.grad_b, b.grad_b));
}

TEST(FusedLinearTest, AppliesToCpuFloatOutsideAutocast) {
  torch::nn::Linear layer(4, 3);
  const auto x = torch::randn({2, 4});
  EXPECT_TRUE(FusedLinearApplies(x, layer));
  EXPECT_FALSE(FusedLinearApplies(x.to(torch::kFloat64), layer));
  EXPECT_FALSE(FusedLinearApplies(x.view({2, 2, 2}), layer));
  at::autocast::set_cpu_enabled(true);
  EXPECT_FALSE(FusedLinearApplies(x, layer));  // autocast runs the plain layer in bf16
  at::autocast::set_cpu_enabled(false);
}

}  // namespace
}  // namespace sift::worker

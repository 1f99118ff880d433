#include "worker/trainer/kernels/fused_linear.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/worker/test_util.h"
#include "worker/trainer/kernels/sgemm.h"
#include "worker/trainer/torch_compat.h"

namespace sift::worker {
namespace fused_linear_test {

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

// ctest runs this binary a second time with the oneDNN lookups switched off
// (worker_trainer_test.WithoutOneDnnGemm), as a pip LibTorch that does not export them leaves
// them: then nothing may use oneDNN, and the products above and below still match.
TEST(SgemmFallbackTest, NothingUsesOneDnnWhenItsSymbolsAreMissing) {
  if (std::getenv("SIFT_EXPECT_NO_ONEDNN") == nullptr) {
    GTEST_SKIP() << "runs under worker_trainer_test.WithoutOneDnnGemm";
  }
  EXPECT_FALSE(SgemmUsesOneDnn());
  EXPECT_FALSE(GemmBf16Available());
  auto a = torch::randn({16, 24}), b = torch::randn({24, 8}), c = torch::empty({16, 8});
  Sgemm(false, false, a, b, c);
  ExpectClose(c, torch::mm(a, b), "sgemm without oneDNN");
}

struct Result {
  torch::Tensor out, grad_x, grad_w, grad_b;
  std::vector<torch::Tensor> All() const { return {out, grad_x, grad_w, grad_b}; }
};

// Runs `run` twice with two intra-op threads: the results are the same bits.
template <typename F>
void ExpectRepeatsOnTwoThreads(F run) {
  const int before = torch::get_num_threads();
  torch::set_num_threads(2);
  const std::vector<torch::Tensor> a = run().All(), b = run().All();
  torch::set_num_threads(before);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
}

// Forward and backward of one layer on fixed inputs; the loss weights each output differently
// so every gradient element matters.
Result ForwardBackward(bool fused, bool relu) {
  torch::manual_seed(2);
  torch::nn::Linear layer(100, 48);
  auto x = torch::randn({64, 100}).requires_grad_(true);
  auto upstream = torch::randn({64, 48});
  auto out =
      fused ? FusedLinear(x, layer, relu) : (relu ? layer->forward(x).relu() : layer->forward(x));
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
  ExpectRepeatsOnTwoThreads([] { return ForwardBackward(/*fused=*/true, /*relu=*/true); });
}

TEST(FusedLinearTest, AppliesToCpuFloatOutsideAutocast) {
  torch::nn::Linear layer(4, 3);
  const auto x = torch::randn({2, 4});
  EXPECT_TRUE(FusedLinearApplies(x, layer));
  EXPECT_FALSE(FusedLinearApplies(x.to(torch::kFloat64), layer));
  EXPECT_FALSE(FusedLinearApplies(x.view({2, 2, 2}), layer));
  SetAutocastEnabled(c10::DeviceType::CPU, true);
  EXPECT_FALSE(FusedLinearApplies(x, layer));  // autocast runs the plain layer in bf16
  SetAutocastEnabled(c10::DeviceType::CPU, false);
}

// Autocast to bf16 on the CPU, as the trainer's AutocastRegion sets it, for one scope.
class Bf16Autocast {
 public:
  Bf16Autocast() {
    SetAutocastEnabled(c10::DeviceType::CPU, true);
    SetAutocastDtype(c10::DeviceType::CPU, at::kBFloat16);
  }
  ~Bf16Autocast() {
    at::autocast::clear_cache();
    SetAutocastEnabled(c10::DeviceType::CPU, false);
  }
};

TEST(GemmBf16Test, MatchesFloatProductOfRoundedInputs) {
  if (!GemmBf16Available()) GTEST_SKIP() << "no AVX512-BF16 or no oneDNN bf16 gemm";
  torch::manual_seed(3);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      auto a = (ta ? torch::randn({53, 37}) : torch::randn({37, 53})).to(torch::kBFloat16);
      auto b = (tb ? torch::randn({29, 53}) : torch::randn({53, 29})).to(torch::kBFloat16);
      auto c = torch::empty({37, 29});
      GemmBf16(ta, tb, a, b, c);
      // Products of bf16 values are exact in fp32: only the summation order differs.
      auto fa = a.to(torch::kFloat32), fb = b.to(torch::kFloat32);
      ExpectClose(c, torch::mm(ta ? fa.t() : fa, tb ? fb.t() : fb), "gemm_bf16");
    }
  }
}

// A hidden layer and the head, as the MLP chains them (fp32 input; bf16 between the layers; fp32
// logits), forward and backward.
struct ChainResult {
  torch::Tensor out, grad_x, grad_w1, grad_b1, grad_w2, grad_b2;
  std::vector<torch::Tensor> All() const {
    return {out, grad_x, grad_w1, grad_b1, grad_w2, grad_b2};
  }
};

enum class Mode {
  kFp32,         // the plain layers in fp32
  kRoundedFp32,  // the same, rounded to bf16 where the bf16 path rounds, math in fp32: input,
                 // weights, hidden activation and the gradients into the products
  kAutocast,     // the plain layers under bf16 autocast, as without AVX512-BF16
  kBf16,         // FusedLinearBf16 under autocast
};

torch::Tensor RoundTrip(const torch::Tensor& t) {
  return t.to(torch::kBFloat16).to(torch::kFloat32);
}

ChainResult Chain(Mode mode) {
  torch::manual_seed(4);
  torch::nn::Linear l1(100, 48), l2(48, 10);
  auto x = torch::randn({64, 100}).requires_grad_(true);
  auto upstream = torch::randn({64, 10});
  torch::Tensor out;
  if (mode == Mode::kBf16) {
    Bf16Autocast autocast;
    Bf16Weight w1, w2;
    EXPECT_TRUE(FusedLinearBf16Applies(x, l1));
    auto h = FusedLinearBf16(x, l1, /*relu=*/true, w1);
    EXPECT_EQ(h.scalar_type(), torch::kBFloat16);
    out = FusedLinearBf16(h, l2, /*relu=*/false, w2);
    EXPECT_EQ(out.scalar_type(), torch::kFloat32);
  } else if (mode == Mode::kAutocast) {
    Bf16Autocast autocast;
    out = l2->forward(l1->forward(x).relu()).to(torch::kFloat32);
  } else if (mode == Mode::kRoundedFp32) {
    auto h = torch::linear(RoundTrip(x), RoundTrip(l1->weight), l1->bias).relu();
    out = torch::linear(RoundTrip(h), RoundTrip(l2->weight), l2->bias);
    // RoundTrip's backward rounds the hidden gradient; this the head's.
    out.register_hook([](const torch::Tensor& g) { return RoundTrip(g); });
  } else {
    out = l2->forward(l1->forward(x).relu());
  }
  (out * upstream).sum().backward();
  return {out.detach(),    x.grad(),          l1->weight.grad(),
          l1->bias.grad(), l2->weight.grad(), l2->bias.grad()};
}

void ExpectWithin(const torch::Tensor& got, const torch::Tensor& want, double tol,
                  const std::string& what) {
  EXPECT_EQ(got.scalar_type(), torch::kFloat32) << what << ": master gradients stay fp32";
  testing::ExpectMaxRelError(got, want, tol, what);
}

void ExpectChainWithin(const ChainResult& got, const ChainResult& want, double tol) {
  ExpectWithin(got.out, want.out, tol, "output");
  ExpectWithin(got.grad_x, want.grad_x, tol, "input gradient");
  ExpectWithin(got.grad_w1, want.grad_w1, tol, "hidden weight gradient");
  ExpectWithin(got.grad_b1, want.grad_b1, tol, "hidden bias gradient");
  ExpectWithin(got.grad_w2, want.grad_w2, tol, "head weight gradient");
  ExpectWithin(got.grad_b2, want.grad_b2, tol, "head bias gradient");
}

// Against fp32 math on the same rounded operands only the summation order differs, but where it
// moves a hidden value across a bf16 rounding boundary that value moves a bf16 step (2^-8), and
// the head's bias gradient sums the fp32 gradient, the reference the rounded one: largest gap
// measured 0.38% of the tensor's largest magnitude (head bias gradient; weight gradients 0.24%).
// The bound, 1%, leaves 2.6x room; a wrong transposition, bias, mask or operand is off by O(1).
TEST(FusedLinearBf16Test, MatchesFp32OnRoundedOperands) {
  if (!GemmBf16Available()) GTEST_SKIP() << "no AVX512-BF16 or no oneDNN bf16 gemm";
  ExpectChainWithin(Chain(Mode::kBf16), Chain(Mode::kRoundedFp32), 1e-2);
}

// Against the fp32 layers, bf16 rounding also moves hidden values near 0 across the ReLU's
// threshold, which drops or passes whole gradient entries: the hidden weight gradient is off by
// up to 11% of its largest magnitude here. Autocast's plain layers, which the trainer ran in bf16
// before, do the same: each gap here is within 1% of theirs (the output's and head's are
// smaller: the head's bias gradient sums fp32). The bound is theirs times 1.25, plus 1e-3.
TEST(FusedLinearBf16Test, MatchesFp32LayersAsCloselyAsAutocast) {
  if (!GemmBf16Available()) GTEST_SKIP() << "no AVX512-BF16 or no oneDNN bf16 gemm";
  const ChainResult fp32 = Chain(Mode::kFp32);
  const ChainResult bf16 = Chain(Mode::kBf16);
  const ChainResult autocast = Chain(Mode::kAutocast);
  const auto gap = [](const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kFloat32) - b).abs().max().item<double>() / b.abs().max().item<double>();
  };
  const std::pair<const char*, torch::Tensor ChainResult::*> fields[] = {
      {"output", &ChainResult::out},
      {"input gradient", &ChainResult::grad_x},
      {"hidden weight gradient", &ChainResult::grad_w1},
      {"hidden bias gradient", &ChainResult::grad_b1},
      {"head weight gradient", &ChainResult::grad_w2},
      {"head bias gradient", &ChainResult::grad_b2}};
  for (const auto& [what, field] : fields) {
    const double ours = gap(bf16.*field, fp32.*field);
    const double theirs = gap(autocast.*field, fp32.*field);
    EXPECT_LE(ours, 1.25 * theirs + 1e-3) << what << ": autocast's gap to fp32 " << theirs;
  }
}

TEST(FusedLinearBf16Test, RepeatsBitwiseWithTwoThreads) {
  if (!GemmBf16Available()) GTEST_SKIP() << "no AVX512-BF16 or no oneDNN bf16 gemm";
  ExpectRepeatsOnTwoThreads([] { return Chain(Mode::kBf16); });
}

// The bf16 copy follows the weight: remade after an in-place update (as the optimizer's), kept
// otherwise, and each time the weight rounded as torch rounds it.
TEST(FusedLinearBf16Test, WeightCopyFollowsUpdates) {
  torch::nn::Linear layer(8, 4);
  Bf16Weight copy;
  const torch::Tensor first = copy.Of(layer->weight);
  EXPECT_TRUE(torch::equal(first, layer->weight.detach().to(torch::kBFloat16)));
  EXPECT_TRUE(copy.Of(layer->weight).is_same(first));  // unchanged: the same tensor
  {
    torch::NoGradGuard no_grad;
    layer->weight.add_(0.5);
  }
  const torch::Tensor second = copy.Of(layer->weight);
  EXPECT_FALSE(second.is_same(first));
  EXPECT_TRUE(torch::equal(second, layer->weight.detach().to(torch::kBFloat16)));
}

TEST(FusedLinearBf16Test, AppliesUnderBf16AutocastOnly) {
  torch::nn::Linear layer(4, 3);
  const auto x = torch::randn({2, 4});
  EXPECT_FALSE(FusedLinearBf16Applies(x, layer));  // autocast off: the fp32 FusedLinear
  Bf16Autocast autocast;
  EXPECT_EQ(FusedLinearBf16Applies(x, layer), GemmBf16Available());
  EXPECT_EQ(FusedLinearBf16Applies(x.to(torch::kBFloat16), layer), GemmBf16Available());
  EXPECT_FALSE(FusedLinearBf16Applies(x.to(torch::kFloat64), layer));
  EXPECT_FALSE(FusedLinearBf16Applies(x.view({2, 2, 2}), layer));
}

}  // namespace fused_linear_test
}  // namespace sift::worker

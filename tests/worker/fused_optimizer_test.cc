#include "worker/trainer/kernels/fused_optimizer.h"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

namespace sift::worker {
namespace fused_optimizer_test {

constexpr int kSteps = 20;
// torch::optim's vectorized add_ uses fused multiply-adds where the fused optimizer rounds twice,
// so the two drift apart by rounding only. The parameters are O(1) (randn, |p| < 5): over 20
// steps the largest gap measured was 4.8e-7, two float ulps at |p| in [2, 4). The bound is
// |fused - torch| <= 1e-6 + 1e-6 |torch|, about 4 ulps; a wrong formula (bias correction, eps
// inside the square root: one parameter gets gradients of 1e-6 so eps matters) misses it by
// orders of magnitude.
constexpr double kRelTol = 1e-6;
constexpr double kAbsTol = 1e-6;

// Parameters of awkward sizes: several thread chunks, a vector tail, a scalar, channels_last.
std::vector<torch::Tensor> MakeParams() {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params = {
      torch::randn({40000}), torch::randn({513}), torch::randn({7, 3}), torch::randn({1}),
      torch::randn({8, 3, 5, 5}).contiguous(at::MemoryFormat::ChannelsLast)};
  for (auto& p : params) p.requires_grad_(true);
  return params;
}

std::vector<torch::Tensor> Copy(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) {
    out.push_back(p.detach().clone(at::MemoryFormat::Preserve).requires_grad_(true));
  }
  return out;
}

// Gradients for step `t`, the same for every optimizer under test; the lr changes every step.
// Parameter 2's are tiny, so Adam's eps is not negligible next to sqrt(v) there.
void SetGrads(const std::vector<torch::Tensor>& params, int t) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + t);
  for (size_t i = 0; i < params.size(); ++i) {
    auto g = torch::randn(params[i].sizes(), gen) * (i == 2 ? 1e-6 : 1.0);
    params[i].mutable_grad() = g.contiguous(params[i].suggest_memory_format());
  }
}

double Lr(int t) { return 1e-2 * (1.0 + 0.5 * std::sin(t)); }

void RunSteps(torch::optim::Optimizer& opt, const std::vector<torch::Tensor>& params, int from,
              int to) {
  for (int t = from; t < to; ++t) {
    for (auto& group : opt.param_groups()) group.options().set_lr(Lr(t));
    SetGrads(params, t);
    opt.step();
  }
}

void ExpectClose(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], kRelTol, kAbsTol))
        << "param " << i << ": max gap " << (a[i] - b[i]).abs().max().item<double>();
  }
}

void ExpectBitwise(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << "param " << i;
    EXPECT_EQ(a[i].strides(), b[i].strides()) << "param " << i;
  }
}

// What a checkpoint does to optimizer state: `from` saved to bytes, loaded into `to`.
void SaveThenLoad(const torch::optim::Optimizer& from, torch::optim::Optimizer& to) {
  std::stringstream buffer;
  torch::serialize::OutputArchive out;
  from.save(out);
  out.save_to(buffer);
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  to.load(in);
}

struct Case {
  std::string name;
  FusedOptimizerOptions fused;
  std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)> reference;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto sgd = [&](const std::string& name, double momentum, bool nesterov, double decay) {
    FusedOptimizerOptions o;
    o.kind = OptimizerKind::kSgd;
    o.momentum = momentum;
    o.nesterov = nesterov;
    o.weight_decay = decay;
    cases.push_back(
        {name, o, [=](std::vector<torch::Tensor> p) {
           return std::make_unique<torch::optim::SGD>(
               p, torch::optim::SGDOptions(1.0).momentum(momentum).nesterov(nesterov).weight_decay(
                      decay));
         }});
  };
  sgd("Sgd", 0.0, false, 0.0);
  sgd("SgdDecay", 0.0, false, 1e-2);
  sgd("SgdMomentum", 0.9, false, 0.0);
  sgd("SgdNesterovDecay", 0.9, true, 5e-3);
  for (double decay : {0.0, 1e-2}) {
    FusedOptimizerOptions adam;
    adam.kind = OptimizerKind::kAdam;
    adam.weight_decay = decay;
    cases.push_back({decay == 0 ? "Adam" : "AdamL2", adam, [=](std::vector<torch::Tensor> p) {
                       return std::make_unique<torch::optim::Adam>(
                           p, torch::optim::AdamOptions(1.0).weight_decay(decay));
                     }});
    FusedOptimizerOptions adamw = adam;
    adamw.kind = OptimizerKind::kAdamW;
    cases.push_back(
        {decay == 0 ? "AdamWNoDecay" : "AdamW", adamw, [=](std::vector<torch::Tensor> p) {
           return std::make_unique<torch::optim::AdamW>(
               p, torch::optim::AdamWOptions(1.0).weight_decay(decay));
         }});
  }
  return cases;
}

class FusedOptimizerTest : public ::testing::TestWithParam<Case> {};

// 20 steps with a new rate each step: the same parameters as torch::optim, to rounding.
TEST_P(FusedOptimizerTest, MatchesTorchOptim) {
  auto fused_params = MakeParams();
  auto reference_params = Copy(fused_params);
  FusedOptimizer fused(fused_params, GetParam().fused);
  auto reference = GetParam().reference(reference_params);
  RunSteps(fused, fused_params, 0, kSteps);
  RunSteps(*reference, reference_params, 0, kSteps);
  ExpectClose(fused_params, reference_params);
  // The updates are not vanishing: the parameters moved well beyond the tolerance.
  EXPECT_GT((fused_params[0] - MakeParams()[0]).abs().max().item<double>(), 1e-2);
}

// Elementwise work: one thread or two (other chunk boundaries) give the same bits.
TEST_P(FusedOptimizerTest, ThreadCountDoesNotChangeBits) {
  const int before = at::get_num_threads();
  auto one = MakeParams();
  auto two = Copy(one);
  at::set_num_threads(1);
  FusedOptimizer a(one, GetParam().fused);
  RunSteps(a, one, 0, kSteps);
  at::set_num_threads(2);
  FusedOptimizer b(two, GetParam().fused);
  RunSteps(b, two, 0, kSteps);
  at::set_num_threads(before);
  ExpectBitwise(one, two);
}

// Save after 10 steps, load into a fresh optimizer: the next 10 steps are bitwise the same.
TEST_P(FusedOptimizerTest, SaveLoadResumesBitwise) {
  auto straight = MakeParams();
  FusedOptimizer a(straight, GetParam().fused);
  RunSteps(a, straight, 0, kSteps);

  auto first = MakeParams();
  auto b = std::make_unique<FusedOptimizer>(first, GetParam().fused);
  RunSteps(*b, first, 0, kSteps / 2);
  auto resumed = Copy(first);
  FusedOptimizer c(resumed, GetParam().fused);
  SaveThenLoad(*b, c);
  b.reset();  // nothing shared with the first run survives
  RunSteps(c, resumed, kSteps / 2, kSteps);
  ExpectBitwise(straight, resumed);
}

// Checkpoints written before the fused optimizer hold torch::optim's state: they still resume.
TEST_P(FusedOptimizerTest, LoadsTorchOptimState) {
  auto reference_params = MakeParams();
  auto reference = GetParam().reference(reference_params);
  RunSteps(*reference, reference_params, 0, kSteps / 2);
  auto fused_params = Copy(reference_params);
  FusedOptimizer fused(fused_params, GetParam().fused);
  SaveThenLoad(*reference, fused);
  RunSteps(fused, fused_params, kSteps / 2, kSteps);
  RunSteps(*reference, reference_params, kSteps / 2, kSteps);
  ExpectClose(fused_params, reference_params);
}

INSTANTIATE_TEST_SUITE_P(Kinds, FusedOptimizerTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// ClearGrads drops the gradients; a parameter without one is left alone and its step not counted.
TEST(FusedOptimizerStandaloneTest, SkipsParametersWithoutGradient) {
  auto params = MakeParams();
  auto before = Copy(params);
  FusedOptimizerOptions o;
  FusedOptimizer opt(params, o);
  SetGrads(params, 0);
  opt.ClearGrads();
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  params[1].mutable_grad() = torch::ones_like(params[1]);
  opt.step();
  EXPECT_TRUE(torch::equal(params[0], before[0]));
  // First Adam step: every element moves by lr (m / sqrt(v) is 1 after bias correction).
  EXPECT_TRUE(torch::allclose(params[1], before[1] - o.lr, 1e-6, 1e-6));
}

}  // namespace fused_optimizer_test
}  // namespace sift::worker

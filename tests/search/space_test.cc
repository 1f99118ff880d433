#include "search/space.h"

#include <gtest/gtest.h>

namespace sift::search {
namespace space_test {

ParamSpec Float(std::string name, double lo, double hi, Scale s = Scale::kLinear) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kFloat;
  p.low = lo;
  p.high = hi;
  p.scale = s;
  return p;
}

ParamSpec Int(std::string name, double lo, double hi, Scale s = Scale::kLinear) {
  ParamSpec p = Float(std::move(name), lo, hi, s);
  p.type = ParamType::kInt;
  return p;
}

ParamSpec Cat(std::string name, std::vector<ParamValue> choices) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kCategorical;
  p.choices = std::move(choices);
  return p;
}

TEST(SearchSpace, RejectsLogScaleWithNonPositiveLow) {
  SearchSpace space({Float("lr", 0.0, 1.0, Scale::kLog)});
  auto errors = space.Validate();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "lr.low: must be > 0 for a log scale");
}

TEST(SearchSpace, RejectsInvertedBoundsDuplicatesAndBadConditions) {
  ParamSpec child = Float("momentum", 0.0, 0.9);
  child.condition = Condition{"optimizer", {std::string("rmsprop")}};
  SearchSpace space({Float("a", 2.0, 1.0), Float("a", 0, 1), Cat("optimizer", {std::string("sgd")}),
                     child, Cat("empty", {})});
  auto errors = space.Validate();
  auto has = [&](const std::string& e) {
    return std::find(errors.begin(), errors.end(), e) != errors.end();
  };
  EXPECT_TRUE(has("a.high: must be >= low"));
  EXPECT_TRUE(has("a: defined twice"));
  EXPECT_TRUE(has("momentum.condition: 'rmsprop' is not a choice of 'optimizer'"));
  EXPECT_TRUE(has("empty.choices: must list at least one value"));
}

TEST(SearchSpace, IntBoundsMustBeExactDoubles) {
  ParamSpec p = Float("n", -1e19, 4);
  p.type = ParamType::kInt;
  EXPECT_EQ(SearchSpace({p}).Validate(),
            std::vector<std::string>{"n: int bounds must be within +/-2^53 (9007199254740992)"});
  p.low = -kMaxIntBound;
  EXPECT_TRUE(SearchSpace({p}).Validate().empty());
}

// One error per repeated value, whatever the number of copies (pairwise checking printed one
// per pair: 190 lines for 20 copies, and ran out of memory at 8,000).
TEST(SearchSpace, ReportsEachRepeatedChoiceOnceWithItsCount) {
  std::vector<ParamValue> choices(500, std::string("adam"));
  choices.push_back(std::string("sgd"));
  choices.push_back(int64_t{64});
  choices.push_back(64.0);  // the same number as 64
  choices.push_back(std::string("sgd"));
  choices.push_back(0.0);
  choices.push_back(-0.0);
  SearchSpace space({Cat("opt", choices)});
  EXPECT_EQ(space.Validate(),
            (std::vector<std::string>{
                "opt.choices: 'adam' is listed 500 times", "opt.choices: 'sgd' is listed 2 times",
                "opt.choices: '64' is listed 2 times", "opt.choices: '0' is listed 2 times"}));
}

TEST(SearchSpace, ConditionParentMustComeFirst) {
  ParamSpec child = Float("momentum", 0.0, 0.9);
  child.condition = Condition{"optimizer", {std::string("sgd")}};
  SearchSpace space({child, Cat("optimizer", {std::string("sgd"), std::string("adam")})});
  auto errors = space.Validate();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("must be a parameter declared before it"), std::string::npos);
}

TEST(SearchSpace, SamplesStayInRangeAndHonourConditions) {
  ParamSpec momentum = Float("momentum", 0.5, 0.99);
  momentum.condition = Condition{"optimizer", {std::string("sgd")}};
  SearchSpace space({Float("lr", 1e-5, 1e-1, Scale::kLog), Int("width", 16, 512, Scale::kLog),
                     Cat("optimizer", {std::string("sgd"), std::string("adam")}), momentum});
  ASSERT_TRUE(space.Validate().empty());
  Rng rng(7);
  int sgd = 0, with_momentum = 0;
  for (int i = 0; i < 2000; ++i) {
    Params p = space.Sample(rng);
    ASSERT_EQ(space.Check(p), "") << ToString(p);
    const bool is_sgd = std::get<std::string>(p.at("optimizer")) == "sgd";
    sgd += is_sgd;
    with_momentum += p.count("momentum");
    EXPECT_EQ(is_sgd, p.count("momentum") == 1);
  }
  EXPECT_EQ(sgd, with_momentum);
  EXPECT_NEAR(sgd / 2000.0, 0.5, 0.05);  // 4.5 sigma for a fair coin
}

TEST(SearchSpace, LogScaleSamplesAreUniformInLogSpace) {
  SearchSpace space({Float("lr", 1e-4, 1.0, Scale::kLog)});
  Rng rng(11);
  int below = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) below += std::get<double>(space.Sample(rng).at("lr")) < 1e-2;
  EXPECT_NEAR(below / double(n), 0.5, 0.04);  // half the log range lies below 1e-2
}

TEST(SearchSpace, IntegersCoverEndpointsEvenly) {
  SearchSpace space({Int("k", 1, 3)});
  Rng rng(3);
  int counts[4] = {0, 0, 0, 0};
  for (int i = 0; i < 3000; ++i) ++counts[std::get<int64_t>(space.Sample(rng).at("k"))];
  for (int k = 1; k <= 3; ++k) EXPECT_NEAR(counts[k], 1000, 120) << k;
}

TEST(SearchSpace, UnitRoundTrip) {
  SearchSpace space(
      {Float("lr", 1e-4, 1.0, Scale::kLog), Int("n", 2, 9), Cat("c", {int64_t{64}, int64_t{128}})});
  for (const auto& spec : space.params()) {
    for (double u : {0.0, 0.13, 0.5, 0.77, 1.0}) {
      ParamValue v = space.FromUnit(spec, u);
      EXPECT_EQ(space.FromUnit(spec, space.ToUnit(spec, v)), v) << spec.name << " " << u;
    }
  }
}

TEST(SearchSpace, CheckNamesTheProblem) {
  SearchSpace space({Float("lr", 1e-4, 1.0, Scale::kLog)});
  EXPECT_EQ(space.Check({{"lr", 2.0}}), "lr: 2 is outside [0.0001, 1]");
  EXPECT_EQ(space.Check({}), "lr: missing");
  EXPECT_EQ(space.Check({{"lr", 0.1}, {"x", 1.0}}), "x: not a parameter of the search space");
}

}  // namespace space_test
}  // namespace sift::search

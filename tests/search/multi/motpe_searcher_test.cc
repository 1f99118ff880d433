#include "search/multi/motpe_searcher.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "search/factory.h"
#include "tests/search/multi/mo_views.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace motpe_searcher_test {

using testing::AddTrial;
using testing::MoStudy;

bool Has(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(MoTpeSearcher, TheGoodSetIsTheFeasibleFront) {
  const SearchSpace space = testing::OneDimSpace();
  StudyView study = MoStudy();
  study.space = &space;
  for (int i = 0; i < 20; ++i) {
    testing::Report r{0.1 + 0.01 * i, 10, 0};
    if (i == 3) r = {0.8, 2, 0};
    if (i == 12) r = {0.7, 1.5, 0};  // trades with 3: both on the front
    if (i == 7) r = {0.9, 1, 5};     // dominates both, but infeasible
    TrialView& t = AddTrial(study, TrialState::kCompleted, {r});
    t.params = {{"x", -2.0 + 0.25 * i}};
  }
  TpeOptions o;
  o.n_startup = 5;
  MoTpeSearcher s(o);
  // 20 observations: the best ceil(0.1 * 20) = 2 are good, the other 18 bad.
  auto [bad, weights] = s.BadTrials(study);
  EXPECT_EQ(bad.size(), 18u);
  EXPECT_FALSE(Has(bad, 3));
  EXPECT_FALSE(Has(bad, 12));
  EXPECT_TRUE(Has(bad, 7));
  // Constant liar: a running trial counts as bad.
  TrialView running;
  running.number = 20;
  running.params = {{"x", 0.0}};
  running.state = TrialState::kRunning;
  study.trials.push_back(running);
  bad = s.BadTrials(study).first;
  EXPECT_EQ(bad.size(), 19u);
  EXPECT_TRUE(Has(bad, 20));
  for (const Params& p : s.Suggest(study, 4)) EXPECT_EQ(space.Check(p), "");
}

TEST(MoTpeSearcher, GoodTrialsWeighByHypervolumeContribution) {
  const SearchSpace space = testing::OneDimSpace();
  StudyView study = MoStudy();
  study.space = &space;
  for (int i = 0; i < 20; ++i) {
    testing::Report r{0.1 + 0.01 * i, 10, 0};  // trial 19 leads these: (0.29, 10)
    if (i == 3) r = {0.8, 2, 0};
    if (i == 12) r = {0.7, 1.5, 0};
    TrialView& t = AddTrial(study, TrialState::kCompleted, {r});
    t.params = {{"x", -2.0 + 0.25 * i}};
  }
  TpeOptions o;
  o.gamma = 0.15;  // 3 good trials: the front {3, 12}, then 19, which 3 dominates
  MoTpeSearcher s(o);
  const auto [good, weights] = s.GoodTrials(study);
  EXPECT_EQ(good, (std::vector<int64_t>{3, 12, 19}));
  // Oriented (0.8, -2), (0.7, -1.5), (0.29, -10); reference (0.239, -10.85). Trial 3 alone
  // dominates 0.1 x 8.85, trial 12 alone 0.461 x 0.5; 19 nothing.
  ASSERT_EQ(weights.size(), 3u);
  EXPECT_DOUBLE_EQ(weights[0], 1.0);
  EXPECT_NEAR(weights[1], 0.461 * 0.5 / (0.1 * 8.85), 1e-9);
  EXPECT_EQ(weights[2], 0.0);
}

TEST(MoTpeSearcher, TheFactoryBuildsItForSeveralObjectives) {
  const SearchSpace space = testing::OneDimSpace();
  std::vector<std::string> errors;
  auto mo = MakeSearcher("tpe", {}, space, &errors, 2);
  EXPECT_NE(dynamic_cast<MoTpeSearcher*>(mo.get()), nullptr);
  auto one = MakeSearcher("tpe", {}, space, &errors, 1);
  EXPECT_EQ(dynamic_cast<MoTpeSearcher*>(one.get()), nullptr);
  EXPECT_TRUE(errors.empty());
}

}  // namespace motpe_searcher_test
}  // namespace sift::search

#include "search/multi/objective_vectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/rng.h"
#include "tests/search/multi/mo_views.h"

namespace sift::search {
namespace objective_vectors_test {

using testing::AddTrial;
using testing::MoStudy;

TEST(ObjectiveVectors, OrientedVectorAtAResource) {
  StudyView study = MoStudy();
  const TrialView& t = AddTrial(study, TrialState::kRunning, {{0.5, 2, 0}, {NAN, 3, 0}});
  EXPECT_EQ(ObjectivesAt(study, t, 1), (std::vector<double>{0.5, -2}));
  // Not a number, or missing, is the worst.
  EXPECT_EQ(ObjectivesAt(study, t, 2), (std::vector<double>{-INFINITY, -3}));
  EXPECT_EQ(ObjectivesAt(study, t, 3), (std::vector<double>{-INFINITY, -INFINITY}));
  // A single-objective view is the list of one.
  StudyView one;
  one.objective.maximize = false;
  EXPECT_EQ(ObjectivesAt(one, t, 1), (std::vector<double>{-0.5}));
  EXPECT_EQ(ObjectiveCount(one), 1u);
}

TEST(ObjectiveVectors, LastCommonResourceSkipsAnEpochAnObjectiveLacks) {
  StudyView study = MoStudy();
  TrialView& t = AddTrial(study, TrialState::kStopped, {{0.5, 2, 0}, {0.6, 3, 0}});
  t.values[3] = 0.7;  // dollars not reported at epoch 3
  EXPECT_EQ(LastCommonResource(study, t), 2);
  t.more_values.clear();
  EXPECT_EQ(LastCommonResource(study, t), 0);
}

TEST(ObjectiveVectors, ViolationIsTheLastReportAtOrBeforeTheResource) {
  StudyView study = MoStudy();
  study.constraints.push_back({"inference_ms", 2.0, false});  // >= 2
  TrialView& t =
      AddTrial(study, TrialState::kRunning, {{0.5, 1, NAN}, {0.5, 1, 1.5}, {0.5, 1, NAN}});
  t.constraint_values.push_back({{2, 1.0}});
  EXPECT_EQ(ViolationAt(study, t, 1), 0.0);  // nothing reported yet: holds
  EXPECT_DOUBLE_EQ(ViolationAt(study, t, 2), 0.5 + 1.0);
  EXPECT_DOUBLE_EQ(ViolationAt(study, t, 3), 1.5);  // epoch 2's size and inference_ms carry on
  t.constraint_values[0][3] = NAN;
  EXPECT_EQ(ViolationAt(study, t, 3), INFINITY);
}

TEST(ObjectiveVectors, FeasibleFirstThenLessViolationThenPareto) {
  const TrialPoint good{0, {0.9, -1}, 0}, poor{1, {0.1, -5}, 0};
  const TrialPoint slightly{2, {1.0, 0}, 0.1}, badly{3, {1.0, 0}, 2.0};
  EXPECT_TRUE(PointDominates(good, poor));
  EXPECT_TRUE(PointDominates(poor, slightly));  // feasible beats a better infeasible one
  EXPECT_TRUE(PointDominates(slightly, badly));
  EXPECT_FALSE(PointDominates(badly, slightly));
  EXPECT_EQ(ConstrainedRanks({badly, slightly, poor, good}), (std::vector<int>{3, 2, 1, 0}));
  const TrialPoint other{4, {0.5, -0.5}, 0};  // trades with good
  EXPECT_EQ(ConstrainedRanks({good, other}), (std::vector<int>{0, 0}));
}

// "Best trial" (the run's closing text, the held-out test score, the exported model) is never a
// trial that broke a constraint while one kept to every bound: a user's params <= 1e6 holds.
TEST(ObjectiveVectors, TheBestTrialKeptItsConstraintsIfAnyTrialDid) {
  StudyView study = MoStudy();
  study.constraints.push_back({"params", 1e6, true});  // <= 1e6
  TrialView& big = AddTrial(study, TrialState::kCompleted, {{0.95, 1, 0}});
  big.constraint_values.push_back({{1, 2e6}});
  TrialView& small = AddTrial(study, TrialState::kCompleted, {{0.90, 1, 0}});
  small.constraint_values.push_back({{1, 5e5}});
  TrialView& unreported = AddTrial(study, TrialState::kCompleted, {{0.99, 1, 0}});
  TrialView& tie = AddTrial(study, TrialState::kCompleted, {{0.90, 1, 0}});
  tie.constraint_values.push_back({{1, 1e6}});  // at the bound: holds
  EXPECT_FALSE(FeasibleAtEnd(study, big));
  EXPECT_TRUE(FeasibleAtEnd(study, small));
  EXPECT_FALSE(FeasibleAtEnd(study, unreported));  // nothing shows it kept to the bound
  EXPECT_TRUE(FeasibleAtEnd(study, tie));
  EXPECT_TRUE(BetterBestTrial(study, small, big));
  EXPECT_FALSE(BetterBestTrial(study, big, small));
  EXPECT_TRUE(BetterBestTrial(study, small, unreported));
  EXPECT_TRUE(BetterBestTrial(study, small, tie));       // equal values: the lower number
  EXPECT_TRUE(BetterBestTrial(study, unreported, big));  // neither feasible: by value
  // Without constraints, by value alone.
  study.constraints.clear();
  EXPECT_TRUE(BetterBestTrial(study, unreported, small));
  EXPECT_TRUE(BetterBestTrial(study, big, small));
}

TEST(ObjectiveVectors, EndedPointsAreWhatSearchersLearnFrom) {
  StudyView study = MoStudy();
  AddTrial(study, TrialState::kCompleted, {{0.5, 2, 0}, {0.8, 3, 0}});
  AddTrial(study, TrialState::kRunning, {{0.9, 1, 0}});
  AddTrial(study, TrialState::kFailed, {{0.9, 1, 0}});
  AddTrial(study, TrialState::kPaused, {{0.4, 1, 3}});
  AddTrial(study, TrialState::kDiverged, {{NAN, 1, 0}});
  AddTrial(study, TrialState::kStopped, {});  // nothing reported
  const std::vector<TrialPoint> p = EndedPoints(study);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].trial, 0);
  EXPECT_EQ(p[0].values, (std::vector<double>{0.8, -3}));
  EXPECT_EQ(p[1].trial, 3);
  EXPECT_DOUBLE_EQ(p[1].violation, 2.0);
  EXPECT_EQ(p[2].trial, 4);
  EXPECT_EQ(p[2].values, (std::vector<double>{-INFINITY, -INFINITY}));
}

TEST(ObjectiveVectors, TopTrialsTakeFeasibleRanksThenLeastViolation) {
  const std::vector<TrialPoint> p{{0, {1.0, 0}, 3},
                                  {1, {0.6, -1}, 0},
                                  {2, {0.1, -2}, 0},
                                  {3, {0.5, -0.5}, 0},
                                  {4, {1.0, 0}, 1}};
  EXPECT_EQ(ConstrainedTopTrials(p, 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ConstrainedTopTrials(p, 4), (std::vector<int64_t>{1, 3, 2, 4}));
  EXPECT_EQ(ConstrainedTopTrials(p, 9), (std::vector<int64_t>{1, 3, 2, 4, 0}));
}

TEST(ObjectiveVectors, InTopAgreesWithTheTopTrials) {
  Rng rng(3);
  for (int round = 0; round < 40; ++round) {
    std::vector<TrialPoint> p;
    for (int64_t t = 0; t < 60; ++t) {
      // Coarse values (ties, several ranks), a few infeasible, a few non-finite.
      TrialPoint x{t, {static_cast<double>(rng.Below(8)), static_cast<double>(rng.Below(8))}, 0};
      if (rng.Below(6) == 0) x.violation = static_cast<double>(rng.Below(3)) + 0.5;
      if (rng.Below(15) == 0) x.values[rng.Below(2)] = -INFINITY;
      p.push_back(x);
    }
    for (int64_t k : {0, 1, 7, 20, 45, 59, 60, 80}) {
      const std::vector<int64_t> top = ConstrainedTopTrials(p, k);
      for (int64_t t = 0; t < 60; ++t) {
        const bool in = std::find(top.begin(), top.end(), t) != top.end();
        EXPECT_EQ(ConstrainedInTop(p, t, k), in) << "round " << round << ", k " << k << ", t " << t;
      }
    }
    EXPECT_FALSE(ConstrainedInTop(p, 99, 60));  // not at the rung
  }
}

}  // namespace objective_vectors_test
}  // namespace sift::search

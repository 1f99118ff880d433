// What model-based searchers learn from: a DIVERGED trial counts as the worst result.
#include "search/observations.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sift::search {
namespace {

TrialView Trial(int64_t number, TrialState state, std::map<int64_t, double> values) {
  TrialView t;
  t.number = number;
  t.state = state;
  t.values = std::move(values);
  return t;
}

TEST(ObservationsTest, DivergedTrialsScoreAsTheWorstAndRankLast) {
  for (const bool maximize : {true, false}) {
    SCOPED_TRACE(maximize ? "maximize" : "minimize");
    StudyView study;
    study.objective.maximize = maximize;
    study.trials = {Trial(0, TrialState::kCompleted, {{1, 0.5}, {2, 0.6}}),
                    Trial(1, TrialState::kDiverged, {}),           // NaN at its first epoch
                    Trial(2, TrialState::kStopped, {{1, 0.2}}),
                    Trial(3, TrialState::kDiverged, {{1, 0.9}}),  // a fine value, then NaN
                    Trial(4, TrialState::kFailed, {{1, 0.3}}),
                    Trial(5, TrialState::kRunning, {{1, 0.4}})};
    const auto obs = CollectObservations(study);
    ASSERT_EQ(obs.size(), 4u);
    for (size_t i = 0; i < obs.size(); ++i) EXPECT_EQ(obs[i].number, static_cast<int64_t>(i));
    const double worst = std::min(study.Score(0.6), study.Score(0.2));
    EXPECT_EQ(obs[1].score, worst);
    EXPECT_EQ(obs[3].score, worst);  // its 0.9 at epoch 1 does not make it good
    EXPECT_FALSE(obs[1].completed);
    EXPECT_FALSE(obs[3].completed);
    // In the ranking TPE and BOHB split on, both come after every trial that got as far.
    EXPECT_TRUE(BetterObservation(obs[0], obs[1]));
    EXPECT_TRUE(BetterObservation(obs[0], obs[3]));
    EXPECT_TRUE(BetterObservation(obs[2], obs[1]));
    EXPECT_FALSE(BetterObservation(obs[3], obs[2]));
  }
}

TEST(ObservationsTest, OnlyDivergedTrialsStillGiveFiniteScores) {
  StudyView study;
  study.trials = {Trial(0, TrialState::kDiverged, {}), Trial(1, TrialState::kDiverged, {})};
  const auto obs = CollectObservations(study);
  ASSERT_EQ(obs.size(), 2u);
  for (const auto& o : obs) EXPECT_TRUE(std::isfinite(o.score));
}

}  // namespace
}  // namespace sift::search

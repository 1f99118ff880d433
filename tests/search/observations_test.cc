// What model-based searchers learn from: a DIVERGED trial counts as the worst result.
#include "search/observations.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/search/history_sim.h"

namespace sift::search {
namespace observations_test {

TrialView Trial(int64_t number, TrialState state, CurveValues values) {
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
                    Trial(1, TrialState::kDiverged, {}),  // NaN at its first epoch
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

TEST(ObservationIndexTest, DensePrefixFollowsTrialsThatLeaveAndReturn) {
  // Kth and CountBefore answer without the tree below the first trial that is not an
  // observation. A history whose trials all end, then an early paused trial resumes (it leaves
  // the observations), a running one is added and later trials end: against a count by hand.
  StudyView study;
  ObservationIndex index;
  auto check = [&](const char* when) {
    index.Sync(study);
    std::vector<int64_t> numbers;
    for (const TrialView& t : study.trials) {
      const bool observed = t.state == TrialState::kDiverged ||
                            (!t.values.empty() &&
                             (t.state == TrialState::kCompleted ||
                              t.state == TrialState::kStopped || t.state == TrialState::kPaused));
      if (observed) numbers.push_back(t.number);
    }
    ASSERT_EQ(index.size(), numbers.size()) << when;
    for (size_t k = 0; k < numbers.size(); ++k) {
      ASSERT_EQ(index.Kth(k), numbers[k]) << when << " k " << k;
      ASSERT_EQ(index.CountBefore(numbers[k]), k) << when;
    }
    for (int64_t t = 0; t <= static_cast<int64_t>(study.trials.size()); ++t) {
      const auto before = static_cast<size_t>(std::lower_bound(numbers.begin(), numbers.end(), t) -
                                              numbers.begin());
      ASSERT_EQ(index.CountBefore(t), before) << when << " t " << t;
    }
  };
  for (int64_t i = 0; i < 40; ++i) {
    study.trials.push_back(
        Trial(i, i % 5 == 2 ? TrialState::kPaused : TrialState::kCompleted, {{1, 0.01 * i}}));
  }
  check("all ended");
  study.trials[7].state = TrialState::kRunning;  // promoted: no longer an observation
  check("a paused trial resumed");
  study.trials.push_back(Trial(40, TrialState::kRunning, {{1, 0.5}}));
  study.trials.push_back(Trial(41, TrialState::kCompleted, {{1, 0.5}}));
  check("a running trial");
  study.trials[7].state = TrialState::kCompleted;  // back, after the gap at 40
  study.trials[40].state = TrialState::kDiverged;  // and the gap closes
  check("all observations again");
}

}  // namespace observations_test
}  // namespace sift::search

namespace sift::search {
namespace observations_test {

// The index, kept across 1,500 changes of a churning history, against a recomputation from scratch
// (CollectObservations with diverged trials scored -infinity, sorted by BetterObservation; the
// k-th observation and counts before a trial number from that list), and
// restarted when the history is swapped for a shorter one or the direction changes.
TEST(ObservationIndexTest, KeptAcrossChangesEqualsARecomputation) {
  const SearchSpace space = testing::MixedSpace();
  for (const bool maximize : {true, false}) {
    testing::ChurningStudy churn(space, maximize ? 3 : 4, 4);
    StudyView& study = churn.study();
    study.objective.maximize = maximize;
    ObservationIndex index;
    Rng rng(5);
    for (int step = 0; step < 1500; ++step) {
      churn.Step(space.Sample(rng));
      if (step == 1200) study.trials.resize(150);
      if (step == 1300) study.objective.maximize = !study.objective.maximize;
      index.Sync(study);
      std::vector<Observation> want = CollectObservations(study);
      for (Observation& o : want) {
        if (study.trials[static_cast<size_t>(o.number)].state == TrialState::kDiverged) {
          o.score = -INFINITY;
        }
      }
      std::vector<int64_t> numbers, open;
      for (const Observation& o : want) numbers.push_back(o.number);
      for (const TrialView& t : study.trials) {
        if (!IsTerminal(t.state)) open.push_back(t.number);
      }
      std::sort(want.begin(), want.end(), BetterObservation);
      ASSERT_EQ(index.size(), want.size()) << "step " << step;
      size_t i = 0;
      for (const Observation& o : index.ranked()) {
        const Observation& w = want[i++];
        ASSERT_EQ(o.number, w.number) << "step " << step << " rank " << i;
        EXPECT_EQ(o.score, w.score);
        EXPECT_EQ(o.resource, w.resource);
        EXPECT_EQ(o.completed, w.completed);
      }
      EXPECT_EQ(std::vector<int64_t>(index.numbers().begin(), index.numbers().end()), numbers);
      // By score alone (diverged last), and the worst score of the others.
      using ByScore = std::vector<std::pair<double, int64_t>>;
      ByScore by_score;
      double worst = 0;
      bool any = false;
      for (const Observation& o : want) {
        by_score.push_back({-o.score, o.number});
        if (std::isfinite(o.score)) {
          worst = any ? std::min(worst, o.score) : o.score;
          any = true;
        }
      }
      std::sort(by_score.begin(), by_score.end());
      ASSERT_EQ(ByScore(index.by_score().begin(), index.by_score().end()), by_score);
      EXPECT_EQ(index.WorstScore(), worst);
      for (size_t k = 0; k < numbers.size(); k += 1 + k / 8) {
        ASSERT_EQ(index.Kth(k), numbers[k]) << "step " << step;
        ASSERT_EQ(index.CountBefore(numbers[k]), k);
        EXPECT_EQ(index.CountBefore(numbers[k] + 1), k + 1);
      }
      EXPECT_EQ(index.open(), open);
    }
  }
}

}  // namespace observations_test
}  // namespace sift::search

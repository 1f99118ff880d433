#include "search/median_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace median_scheduler_test {

StudyView Curves(const std::vector<std::vector<double>>& curves, bool maximize = true) {
  StudyView study;
  study.max_resource = 100;
  study.objective.maximize = maximize;
  for (size_t i = 0; i < curves.size(); ++i) {
    TrialView t;
    t.number = static_cast<int64_t>(i);
    for (size_t e = 0; e < curves[i].size(); ++e)
      t.values[static_cast<int64_t>(e + 1)] = curves[i][e];
    study.trials.push_back(t);
  }
  return study;
}

TEST(MedianExcluding, LeavesOneOut) {
  EXPECT_DOUBLE_EQ(MedianExcluding({1, 2, 3, 4}, -1), 2.5);
  EXPECT_DOUBLE_EQ(MedianExcluding({1, 2, 3, 4}, 0), 3.0);
  EXPECT_DOUBLE_EQ(MedianExcluding({1, 2, 3, 4}, 3), 2.0);
  EXPECT_DOUBLE_EQ(MedianExcluding({1, 2, 3}, 1), 2.0);
}

TEST(MedianSplit, AgreesWithASortedRecomputation) {
  // After every insertion (ties, NaNs ranked lowest, trials out of order and twice), the median
  // leaving out each recorded entry, and leaving out none, equals MedianExcluding on the sorted
  // averages, bit for bit.
  Rng rng(4);
  MedianSplit split;
  std::vector<MedianSplit::Entry> all;
  std::vector<char> added(300, 0);
  for (int i = 0; i < 400; ++i) {
    const auto trial = static_cast<int64_t>(rng.Below(300));
    const double average = rng.Below(25) == 0 ? NAN : std::round(rng.Uniform() * 40) / 40;
    split.Add(trial, average);
    if (!added[static_cast<size_t>(trial)]) {
      added[static_cast<size_t>(trial)] = 1;
      all.push_back({MedianSplit::Orderable(average), trial});
    }
    std::vector<MedianSplit::Entry> sorted = all;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> values;
    for (const auto& e : sorted) values.push_back(e.average);
    ASSERT_EQ(split.size(), static_cast<int64_t>(sorted.size()));
    EXPECT_EQ(split.MedianWithout({0.5, 1000}, false), MedianExcluding(values, -1));
    for (size_t s = 0; s < sorted.size() && sorted.size() > 1; ++s) {
      ASSERT_TRUE(split.Has(sorted[s].trial, sorted[s].average));
      ASSERT_EQ(split.MedianWithout(sorted[s], true),
                MedianExcluding(values, static_cast<int64_t>(s)))
          << "n " << sorted.size() << " skip " << s;
    }
  }
}

TEST(MedianScheduler, StopsBelowTheMedianOfRunningAverages) {
  // Running averages at epoch 2: t0 (0.6+0.8)/2=0.7, t1 0.5, t2 0.9 -> median 0.7.
  auto study = Curves({{0.6, 0.8}, {0.4, 0.6}, {0.8, 1.0}, {0.5, 0.65}});
  MedianScheduler s({/*min_resource=*/1, /*min_trials=*/3, 0.0, false});
  Decision d = s.OnReport(study, study.trials[3]);  // best 0.65 < 0.7
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason,
            "median rule: best value 0.65 at epoch 2 is worse than the median running average "
            "0.7 of 3 other trials");
  study.trials[3].values[2] = 0.7;  // best 0.7 is not worse
  MedianScheduler fresh({1, 3, 0.0, false});
  EXPECT_EQ(fresh.OnReport(study, study.trials[3]).action, Action::kContinue);
}

TEST(MedianScheduler, NeedsMinTrialsAndMinResourceAndGrace) {
  auto study = Curves({{0.6, 0.8}, {0.4, 0.6}, {0.5, 0.65}});
  MedianScheduler few({1, 3, 0.0, false});
  EXPECT_EQ(few.OnReport(study, study.trials[2]).action, Action::kContinue);
  auto more = Curves({{0.6, 0.8}, {0.4, 0.6}, {0.8, 1.0}, {0.5, 0.65}});
  MedianScheduler late({/*min_resource=*/3, 3, 0.0, false});
  EXPECT_EQ(late.OnReport(more, more.trials[3]).action, Action::kContinue);
  MedianScheduler lenient({1, 3, /*grace=*/0.1, false});
  EXPECT_EQ(lenient.OnReport(more, more.trials[3]).action, Action::kContinue);
}

TEST(MedianScheduler, MinimizeAndRunningAverageMode) {
  // Losses: running averages at epoch 2 of others: 0.3, 0.5, 0.1 -> median 0.3.
  auto study = Curves({{0.4, 0.2}, {0.6, 0.4}, {0.2, 0.0}, {0.5, 0.25}}, /*maximize=*/false);
  MedianScheduler best({1, 3, 0.0, false});
  EXPECT_EQ(best.OnReport(study, study.trials[3]).action, Action::kContinue);  // best 0.25
  MedianScheduler avg({1, 3, 0.0, true});
  EXPECT_EQ(avg.OnReport(study, study.trials[3]).action, Action::kStop);  // average 0.375
}

// The median rule recomputed from scratch: every trial's running average at epoch t, sorted
// (NaN ranked lowest, ties by trial number), the median leaving the trial itself out.
Action ExpectedMedianAction(const StudyView& study, const TrialView& trial) {
  const int64_t t = trial.LastResource();
  std::vector<MedianSplit::Entry> all;
  for (const TrialView& x : study.trials) {
    if (x.values.count(t) == 0) continue;
    double sum = 0;
    int64_t n = 0;
    for (auto it = x.values.begin(); it != x.values.end() && it->first <= t; ++it, ++n) {
      sum += study.Score(it->second);
    }
    all.push_back({MedianSplit::Orderable(sum / static_cast<double>(n)), x.number});
  }
  std::sort(all.begin(), all.end());
  const auto self = std::find_if(
      all.begin(), all.end(), [&](const MedianSplit::Entry& e) { return e.trial == trial.number; });
  if (t < 1 || t >= study.max_resource || all.size() - 1 < 3) return Action::kContinue;
  std::vector<double> sorted;
  for (const auto& e : all) sorted.push_back(e.average);
  const double median = MedianExcluding(sorted, self - all.begin());
  double best = study.Score(trial.values.begin()->second);
  for (const auto& [r, v] : trial.values) best = std::max(best, study.Score(v));
  return best >= median ? Action::kContinue : Action::kStop;
}

// Many trials whose curves trend upwards with the trial number (the median at each epoch keeps
// rising, so the window around it moves again and again), with ties and NaNs, several at a time:
// every decision of the kept scheduler equals the rule recomputed from scratch, and every tenth
// one that of a scheduler built fresh on the same view (a restart); now and then the kept one is
// handed an empty study and then this one again (a Sync that rebuilds every table).
TEST(MedianScheduler, KeptTablesEqualARecomputationOnATrendingHistory) {
  for (const bool maximize : {true, false}) {
    const MedianOptions o{/*min_resource=*/1, /*min_trials=*/3, 0.0, false};
    MedianScheduler kept(o);
    StudyView study;
    study.max_resource = 8;
    study.objective.maximize = maximize;
    const StudyView empty;
    Rng rng(maximize ? 3 : 4);
    std::vector<int64_t> running;
    int stopped = 0;
    for (int step = 0; study.trials.size() < 1000; ++step) {
      if (step % 700 == 699) kept.OnReport(empty, TrialView{});
      while (running.size() < 5) {
        TrialView t;
        t.number = static_cast<int64_t>(study.trials.size());
        t.state = TrialState::kRunning;
        study.trials.push_back(t);
        running.push_back(t.number);
      }
      const size_t pick = rng.Below(running.size());
      TrialView& t = study.trials[static_cast<size_t>(running[pick])];
      const int64_t e = t.LastResource() + 1;
      const double v = 0.001 * static_cast<double>(t.number) + 0.1 * e + 0.3 * rng.Uniform();
      t.values[e] = rng.Below(60) == 0 ? NAN : std::round((maximize ? v : -v) * 50) / 50;
      const Decision d = kept.OnReport(study, t);
      ASSERT_EQ(d.action, ExpectedMedianAction(study, t)) << "step " << step;
      if (step % 10 == 0) {
        MedianScheduler fresh(o);
        const Decision f = fresh.OnReport(study, t);
        ASSERT_EQ(f.action, d.action);
        ASSERT_EQ(f.reason, d.reason);
      }
      if (d.action == Action::kStop || e >= study.max_resource) {
        stopped += d.action == Action::kStop;
        t.state = d.action == Action::kStop ? TrialState::kStopped : TrialState::kCompleted;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
      }
    }
    EXPECT_GT(stopped, 50);
  }
}

}  // namespace median_scheduler_test
}  // namespace sift::search

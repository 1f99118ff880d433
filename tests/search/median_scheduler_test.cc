#include "search/median_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/rng.h"

namespace sift::search {
namespace {

StudyView Curves(const std::vector<std::vector<double>>& curves, bool maximize = true) {
  StudyView study;
  study.max_resource = 100;
  study.objective.maximize = maximize;
  for (size_t i = 0; i < curves.size(); ++i) {
    TrialView t;
    t.number = static_cast<int64_t>(i);
    for (size_t e = 0; e < curves[i].size(); ++e) t.values[static_cast<int64_t>(e + 1)] = curves[i][e];
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

}  // namespace
}  // namespace sift::search

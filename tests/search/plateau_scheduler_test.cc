#include "search/plateau_scheduler.h"

#include <gtest/gtest.h>

namespace sift::search {
namespace plateau_scheduler_test {

StudyView OneTrial(std::vector<double> curve, bool maximize = true) {
  StudyView study;
  study.objective.maximize = maximize;
  TrialView t;
  for (size_t i = 0; i < curve.size(); ++i) t.values[static_cast<int64_t>(i + 1)] = curve[i];
  study.trials.push_back(t);
  return study;
}

TEST(PlateauScheduler, StopsAfterPatienceReportsWithoutImprovement) {
  PlateauScheduler s({/*patience=*/2, /*min_delta=*/0.01, 0.0, 1});
  auto study = OneTrial({0.80, 0.85, 0.855, 0.851});
  Decision d = s.OnReport(study, study.trials[0]);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "plateau: no improvement > 0.01 in 2 epochs (best 0.8500 at epoch 2)");

  auto improving = OneTrial({0.80, 0.85, 0.855, 0.87});
  EXPECT_EQ(s.OnReport(improving, improving.trials[0]).action, Action::kContinue);
}

TEST(PlateauScheduler, MinimizeOrientation) {
  PlateauScheduler s({/*patience=*/1, 0.0, 0.0, 1});
  auto falling = OneTrial({1.0, 0.9}, /*maximize=*/false);
  EXPECT_EQ(s.OnReport(falling, falling.trials[0]).action, Action::kContinue);
  auto rising = OneTrial({1.0, 1.1}, /*maximize=*/false);
  EXPECT_EQ(s.OnReport(rising, rising.trials[0]).action, Action::kStop);
}

TEST(PlateauScheduler, RespectsMinResource) {
  PlateauScheduler s({/*patience=*/1, 0.0, 0.0, /*min_resource=*/4});
  auto study = OneTrial({0.9, 0.8, 0.7});
  EXPECT_EQ(s.OnReport(study, study.trials[0]).action, Action::kContinue);
}

TEST(PlateauScheduler, SmoothingIgnoresASingleNoisyDip) {
  // Raw values dip once; with smoothing 0.5 the smoothed curve still improves each epoch.
  PlateauScheduler raw({/*patience=*/1, 0.0, 0.0, 1});
  PlateauScheduler smooth({/*patience=*/1, 0.0, 0.5, 1});
  auto study = OneTrial({0.70, 0.80, 0.78});
  EXPECT_EQ(raw.OnReport(study, study.trials[0]).action, Action::kStop);
  EXPECT_EQ(smooth.OnReport(study, study.trials[0]).action, Action::kContinue);
}

}  // namespace plateau_scheduler_test
}  // namespace sift::search

#include "search/multi/mo_median_scheduler.h"

#include <gtest/gtest.h>

#include "tests/search/multi/mo_views.h"

namespace sift::search {
namespace mo_median_scheduler_test {

using testing::AddTrial;
using testing::MoStudy;

// Three trials at epoch 2 whose running averages have the median (0.65, 1.5 dollars).
StudyView Others() {
  StudyView study = MoStudy();
  AddTrial(study, TrialState::kRunning, {{0.5, 1, 0}, {0.6, 2, 0}});
  AddTrial(study, TrialState::kRunning, {{0.6, 1, 0}, {0.7, 2, 0}});
  AddTrial(study, TrialState::kCompleted, {{0.7, 2, 0}, {0.8, 4, 0}});
  return study;
}

Decision Judge(const std::vector<testing::Report>& reports, MedianOptions o = {}) {
  StudyView study = Others();
  const TrialView& t = AddTrial(study, TrialState::kRunning, reports);
  MoMedianScheduler s(o);
  return s.OnReport(study, t);
}

TEST(MoMedianScheduler, StopsWhatTheMedianDominates) {
  const Decision d = Judge({{0.4, 2, 0}, {0.5, 3, 0}});  // best (0.5, 2 dollars)
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason,
            "mo-median rule: best values (0.5, 2) at epoch 2 are dominated by the median "
            "running averages (0.65, 1.5) of 3 other trials");
  // Better in accuracy, worse in dollars: a trade-off, not behind.
  EXPECT_EQ(Judge({{0.4, 1, 0}, {0.9, 5, 0}}).action, Action::kContinue);
  // Behind by less than the grace everywhere it is behind.
  MedianOptions lenient;
  lenient.grace = 0.6;
  EXPECT_EQ(Judge({{0.4, 2, 0}, {0.5, 3, 0}}, lenient).action, Action::kContinue);
}

TEST(MoMedianScheduler, StopsAnInfeasibleTrialAmongFeasibleOnes) {
  // The best values of all, but its size breaks the constraint (<= 1): infeasible ranks behind.
  const Decision d = Judge({{0.9, 0.1, 2.0}, {0.99, 0.2, 2.0}});
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason,
            "mo-median rule: constraint violation 1 at epoch 2 is above the median violation 0 "
            "of 3 other trials");
}

TEST(MoMedianScheduler, WaitsForMinTrialsAndMinResource) {
  MedianOptions o;
  o.min_trials = 4;
  EXPECT_EQ(Judge({{0.4, 2, 0}, {0.5, 3, 0}}, o).action, Action::kContinue);
  o.min_trials = 3;
  o.min_resource = 3;
  EXPECT_EQ(Judge({{0.4, 2, 0}, {0.5, 3, 0}}, o).action, Action::kContinue);
}

}  // namespace mo_median_scheduler_test
}  // namespace sift::search

#include "search/multi/mo_plateau_scheduler.h"

#include <gtest/gtest.h>

#include "tests/search/multi/mo_views.h"

namespace sift::search {
namespace mo_plateau_scheduler_test {

using testing::AddTrial;
using testing::MoStudy;

Decision Judge(const std::vector<testing::Report>& reports) {
  StudyView study = MoStudy();
  const TrialView& t = AddTrial(study, TrialState::kRunning, reports);
  PlateauOptions o;
  o.patience = 2;
  MoPlateauScheduler s(o);
  return s.OnReport(study, t);
}

TEST(MoPlateauScheduler, StopsOnlyWhenNoObjectiveImproved) {
  // Accuracy flat, dollars falling (a cheaper setting each epoch): still improving.
  EXPECT_EQ(Judge({{0.5, 3, 0}, {0.5, 2, 0}, {0.5, 1, 0}}).action, Action::kContinue);
  const Decision d = Judge({{0.5, 1, 0}, {0.5, 1, 0}, {0.5, 1, 0}});
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason,
            "mo-plateau: no objective improved by > 0 in 2 epochs (best 0.5 at epoch 1, 1 at "
            "epoch 1)");
  EXPECT_EQ(Judge({{0.5, 1, 0}, {0.5, 1, 0}, {0.6, 1, 0}}).action, Action::kContinue);
}

TEST(MoPlateauScheduler, WhileInfeasibleOnlyLessViolationIsProgress) {
  // Accuracy climbs, but the size stays over its bound (<= 1).
  const Decision d = Judge({{0.5, 1, 2}, {0.6, 1, 2}, {0.7, 1, 2}});
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason,
            "mo-plateau: no objective improved by > 0 in 2 epochs (best 0.7 at epoch 3, 1 at "
            "epoch 1); infeasible (violation 1)");
  EXPECT_EQ(Judge({{0.5, 1, 3}, {0.5, 1, 2}, {0.5, 1, 1.5}}).action, Action::kContinue);
  EXPECT_EQ(Judge({{0.5, 1, 2}, {0.5, 1, 2}, {0.5, 1, 1}}).action, Action::kContinue);
}

}  // namespace mo_plateau_scheduler_test
}  // namespace sift::search

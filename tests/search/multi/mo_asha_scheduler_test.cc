#include "search/multi/mo_asha_scheduler.h"

#include <gtest/gtest.h>

#include "search/factory.h"
#include "tests/search/multi/mo_views.h"

namespace sift::search {
namespace mo_asha_scheduler_test {

using testing::AddTrial;
using testing::MoStudy;

AshaOptions Options(bool promotion, int64_t eta, int64_t brackets = 1) {
  AshaOptions o;
  o.eta = eta;
  o.max_resource = 9;
  o.promotion = promotion;
  o.brackets = brackets;
  return o;
}

// Each trial reports epoch 1 in turn (a rung), as the coordinator would deliver them.
std::vector<Decision> ReportAll(MoAshaScheduler& s, StudyView& study,
                                const std::vector<testing::Report>& at_rung) {
  std::vector<Decision> out;
  for (const auto& r : at_rung) {
    TrialView& t = AddTrial(study, TrialState::kRunning, {r});
    const Decision d = s.OnReport(study, t);
    t.state = d.action == Action::kPause  ? TrialState::kPaused
              : d.action == Action::kStop ? TrialState::kStopped
                                          : TrialState::kRunning;
    out.push_back(d);
  }
  return out;
}

TEST(MoAshaScheduler, PromotesTheParetoBestOfARung) {
  MoAshaScheduler s(Options(/*promotion=*/true, /*eta=*/3));
  StudyView study = MoStudy();
  // Trial 1 dominates the others (more accurate and cheaper); 2 trades with 0.
  const auto d = ReportAll(s, study, {{0.5, 5, 0}, {0.9, 1, 0}, {0.4, 3, 0}});
  for (const Decision& x : d) EXPECT_EQ(x.action, Action::kPause) << x.reason;
  EXPECT_EQ(d[2].reason,
            "mo-asha: paused at rung 0 (epoch 1): not in the top 1 of 3 by constrained "
            "non-dominated rank (top 1/3)");
  EXPECT_EQ(s.NextPromotion(study), 1);
  // Once it trains on, nobody else is in the top 1 of 3.
  study.trials[1].state = TrialState::kRunning;
  EXPECT_EQ(s.NextPromotion(study), std::nullopt);
}

TEST(MoAshaScheduler, StopsAnInfeasibleTrialBeforeAFeasibleDominatedOne) {
  MoAshaScheduler s(Options(/*promotion=*/false, /*eta=*/2));
  StudyView study = MoStudy();
  // Trial 1 dominates trial 0 in both objectives but its size breaks the constraint (<= 1).
  const auto d = ReportAll(s, study, {{0.5, 5, 0.5}, {0.9, 1, 3.0}});
  EXPECT_EQ(d[0].action, Action::kContinue);
  EXPECT_EQ(d[1].action, Action::kStop);
  EXPECT_EQ(d[1].reason,
            "mo-asha: stopped at rung 0 (epoch 1): not in the top 1 of 2 by constrained "
            "non-dominated rank (top 1/2); infeasible (violation 2)");
  // Without the constraint, the dominated trial is the one behind.
  StudyView free = MoStudy();
  free.constraints.clear();
  MoAshaScheduler t(Options(false, 2));
  const auto e = ReportAll(t, free, {{0.9, 1, 3.0}, {0.5, 5, 0.5}});
  EXPECT_EQ(e[1].action, Action::kStop);
}

TEST(MoAshaScheduler, StopsADominatedTrialBehindAFrontTooLargeToKeep) {
  // Three trials trading accuracy for dollars, none dominated: with eta 2 two of four survive,
  // picked from that front; the fourth, dominated by trial 2, stops.
  MoAshaScheduler s(Options(false, 2));
  StudyView study = MoStudy();
  const auto d = ReportAll(s, study, {{0.9, 9, 0}, {0.5, 1, 0}, {0.7, 4, 0}, {0.6, 6, 0}});
  EXPECT_EQ(d[0].action, Action::kContinue);
  EXPECT_EQ(d[3].action, Action::kStop) << d[3].reason;  // dominated by trial 2
}

TEST(MoAshaScheduler, HyperbandBracketsMatchAshas) {
  AshaOptions o = Options(true, 3, 2);
  MoAshaScheduler mo(o);
  AshaScheduler one(o);
  for (int64_t n = 0; n < 50; ++n) EXPECT_EQ(mo.BracketOf(n), one.BracketOf(n)) << n;
}

TEST(MoAshaScheduler, TheFactoryBuildsItForSeveralObjectives) {
  std::vector<std::string> errors;
  auto s = MakeScheduler("hyperband", {}, {9, true, 2}, &errors);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(dynamic_cast<MoAshaScheduler*>(s.get()), nullptr);
  EXPECT_NE(dynamic_cast<AshaScheduler*>(MakeScheduler("asha", {}, {9, true, 1}, &errors).get()),
            nullptr);
}

}  // namespace mo_asha_scheduler_test
}  // namespace sift::search

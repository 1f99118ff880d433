// The ledger on its own: segments priced at their $/h, study totals with open leases billed to
// now, charges per trial, waste since the last checkpoint, idle stretches, and the pricing of
// the Store's rows agreeing with the running totals.
#include "coordinator/cost/ledger.h"

#include <gtest/gtest.h>

namespace sift::coordinator {
namespace ledger_test {

// $3.6/h is $0.001 a second.
SegmentRecord Segment(const std::string& lease, int64_t study, int64_t number, double start,
                      std::optional<double> end, double price = 3.6,
                      const std::string& market = "spot") {
  SegmentRecord s;
  s.lease_id = lease;
  s.worker_id = "w-" + lease;
  s.study_id = study;
  s.number = number;
  s.start = start;
  s.end = end;
  s.price_per_hour = price;
  s.market = market;
  return s;
}

TEST(Ledger, OpenSegmentsAreBilledToNowAndClosedOnesChargeTheirTrial) {
  Ledger ledger;
  ledger.Open(Segment("L1", 1, 0, 100, std::nullopt));
  ledger.Open(Segment("L2", 1, 1, 110, std::nullopt, 7.2));
  ledger.Open(Segment("L3", 2, 0, 100, std::nullopt));
  EXPECT_TRUE(ledger.Start("L1").has_value());
  EXPECT_EQ(ledger.Start("L2"), 110);
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(1, 120), 20 * 0.001 + 10 * 0.002);
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(2, 120), 20 * 0.001);
  EXPECT_EQ(ledger.StudyDollars(3, 120), 0);  // a study it never saw

  const auto charge = ledger.Close("L1", 130);
  ASSERT_TRUE(charge.has_value());
  EXPECT_EQ(charge->study_id, 1);
  EXPECT_EQ(charge->number, 0);
  EXPECT_DOUBLE_EQ(charge->seconds, 30);
  EXPECT_DOUBLE_EQ(charge->dollars, 0.03);
  EXPECT_FALSE(ledger.Close("L1", 140).has_value());  // closed once
  EXPECT_FALSE(ledger.Start("L1").has_value());
  // Closed dollars stay; the open one goes on.
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(1, 140), 0.03 + 30 * 0.002);
  EXPECT_DOUBLE_EQ(ledger.StudiesDollars({1, 2}, 140), 0.03 + 30 * 0.002 + 40 * 0.001);
}

TEST(Ledger, WorkSinceTheLastCheckpointIsWhatAnEndLoses) {
  Ledger ledger;
  ledger.Open(Segment("L1", 1, 0, 100, std::nullopt));
  EXPECT_DOUBLE_EQ(ledger.LostSecondsAt("L1", 104), 4);  // nothing saved since the start
  ledger.NoteCheckpoint("L1", 103);
  EXPECT_DOUBLE_EQ(ledger.LostSecondsAt("L1", 104), 1);
  EXPECT_DOUBLE_EQ(ledger.LostSecondsAt("L1", 102), 0);  // billed to before the checkpoint
  EXPECT_EQ(ledger.LostSecondsAt("nope", 104), 0);
  EXPECT_EQ(LostSeconds(10, 4), 6);
  EXPECT_EQ(LostSeconds(3, 4), 0);
}

TEST(Ledger, RestoreSumsClosedSegmentsBillsOpenOnesAndDropForgetsTheStudy) {
  const std::vector<SegmentRecord> segments = {
      Segment("A", 1, 0, 100, 110),                    // $0.01
      Segment("B", 1, 0, 110, 120, 7.2, "on-demand"),  // $0.02
      Segment("C", 1, 1, 115, std::nullopt),           // open
  };
  Ledger ledger;
  const auto costs = ledger.RestoreStudy(1, segments, 125);
  EXPECT_DOUBLE_EQ(costs.at(0).dollars, 0.03);
  EXPECT_DOUBLE_EQ(costs.at(0).seconds, 20);
  EXPECT_EQ(costs.at(0).segments, 2);
  // Trial 1's open segment is charged when it closes, whole and once (it was also charged to
  // `now` here, so a restart counted its first part twice in the trial's cost).
  EXPECT_EQ(costs.count(1), 0u);
  EXPECT_TRUE(ledger.Start("C").has_value());
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(1, 125), 0.04);
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(1, 135), 0.05);
  EXPECT_DOUBLE_EQ(ledger.LostSecondsAt("C", 120), 5);  // from its start: no checkpoint known
  // Restoring again starts over rather than counting twice.
  ledger.RestoreStudy(1, segments, 125);
  EXPECT_DOUBLE_EQ(ledger.StudyDollars(1, 125), 0.04);
  const auto charge = ledger.Close("C", 135);
  ASSERT_TRUE(charge.has_value());
  EXPECT_EQ(charge->number, 1);
  EXPECT_DOUBLE_EQ(charge->dollars, 0.02);  // 115-135 s at $3.60/h
  ledger.RestoreStudy(1, segments, 125);
  ledger.DropStudy(1);
  EXPECT_EQ(ledger.StudyDollars(1, 125), 0);
  EXPECT_FALSE(ledger.Start("C").has_value());
}

TEST(Ledger, TheRunningTotalsEqualTheStoresRowsPriced) {
  // Odd prices and times: the totals agree with the rows up to the order of summation.
  Ledger ledger;
  std::vector<SegmentRecord> rows;
  double t = 1.7e9 + 0.123;
  for (int i = 0; i < 50; ++i) {
    SegmentRecord s = Segment("L" + std::to_string(100 + i), 1, i % 7, t, std::nullopt,
                              0.37 + 0.011 * i, i % 3 ? "spot" : "on-demand");
    ledger.Open(s);
    t += 13.37 + 0.1 * i;
    if (i % 5 != 4) {  // most end; every fifth is still open
      ledger.Close(s.lease_id, t);
      s.end = t;
    }
    rows.push_back(s);
  }
  const double now = t + 42.5;
  const StudyCost cost = StudyCostOf(rows, {}, now);
  double from_trials = 0;
  for (const auto& [n, c] : TrialCosts(rows, now)) from_trials += c.dollars;
  EXPECT_NEAR(cost.dollars, ledger.StudyDollars(1, now), 1e-12);
  EXPECT_NEAR(from_trials, ledger.StudyDollars(1, now), 1e-12);
  double by_market = 0;
  for (const auto& [m, d] : cost.dollars_by_market) by_market += d;
  EXPECT_NEAR(by_market, cost.dollars, 1e-12);
}

TEST(Ledger, RowsArePricedWithWasteInterruptionsAndTheSpendCurve) {
  SegmentRecord pre = Segment("A", 1, 0, 100, 110);
  pre.end_reason = "preempted";
  pre.wasted_seconds = 4;
  SegmentRecord exp = Segment("B", 1, 0, 120, 130, 7.2);
  exp.end_reason = "expired";
  exp.wasted_seconds = 2;
  SegmentRecord open = Segment("C", 1, 1, 125, std::nullopt);
  const std::vector<SegmentRecord> rows = {pre, exp, open};
  EXPECT_DOUBLE_EQ(SegmentSeconds(open, 135), 10);
  EXPECT_DOUBLE_EQ(SegmentDollars(pre, 999), 0.01);
  EXPECT_DOUBLE_EQ(WastedDollars(exp), 0.004);
  EXPECT_DOUBLE_EQ(SegmentDollarsBy(pre, 105), 0.005);  // half of it by then
  EXPECT_EQ(SegmentDollarsBy(open, 120), 0);            // not started by then
  EXPECT_DOUBLE_EQ(SegmentDollarsBy(open, 130), 0.005);

  const auto trials = TrialCosts(rows, 135);
  EXPECT_DOUBLE_EQ(trials.at(0).dollars, 0.03);
  EXPECT_DOUBLE_EQ(trials.at(0).wasted_dollars, 0.008);
  EXPECT_EQ(trials.at(0).interruptions, 2);
  EXPECT_EQ(trials.at(1).interruptions, 0);

  IdleSegmentRecord idle;
  idle.start = 200;
  idle.end = 230;
  idle.price_per_hour = 3.6;
  EXPECT_DOUBLE_EQ(IdleDollars(idle), 0.03);
  const StudyCost cost = StudyCostOf(rows, {idle}, 135);
  EXPECT_DOUBLE_EQ(cost.dollars, 0.04);
  EXPECT_DOUBLE_EQ(cost.wasted_dollars, 0.008);
  EXPECT_DOUBLE_EQ(cost.dollars_by_market.at("spot"), 0.04);
  EXPECT_EQ(cost.preemptions, 1);
  EXPECT_EQ(cost.expirations, 1);
  EXPECT_DOUBLE_EQ(cost.idle_seconds, 30);
  EXPECT_DOUBLE_EQ(cost.idle_dollars, 0.03);
  EXPECT_DOUBLE_EQ(cost.paused_wasted_dollars, 0);
  // A study pause's lost work is waste too, and told apart.
  SegmentRecord paused = Segment("D", 1, 1, 140, 150);
  paused.end_reason = kStudyPausedSegment;
  paused.wasted_seconds = 5;
  const StudyCost with_pause = StudyCostOf({pre, exp, paused}, {}, 160);
  EXPECT_DOUBLE_EQ(with_pause.wasted_dollars, 0.008 + 0.005);
  EXPECT_DOUBLE_EQ(with_pause.paused_wasted_dollars, 0.005);
}

TEST(Ledger, AnIdleStretchIsOpenedOnceAndClosedIntoARecord) {
  Ledger ledger;
  ledger.OpenIdle("w1", 7, 100, 3.6, "spot");
  ledger.OpenIdle("w1", 8, 150, 3.6, "spot");  // already idle: kept as it was
  ASSERT_NE(ledger.IdleOf("w1"), nullptr);
  EXPECT_EQ(ledger.IdleOf("w1")->start, 100);
  EXPECT_EQ(ledger.IdleOf("w1")->after_study_id, 7);
  ledger.OpenIdle("w2", 7, 110, 7.2, "on-demand");
  ledger.OpenIdle("w3", 9, 100, 3.6, "spot");
  // Study 7's open stretches, w2's only to its last sign of life.
  double seconds = 0, dollars = 0;
  ledger.OpenIdleOf(
      7, [](const std::string& w) { return w == "w2" ? 115.0 : 120.0; }, &seconds, &dollars);
  EXPECT_DOUBLE_EQ(seconds, 20 + 5);
  EXPECT_DOUBLE_EQ(dollars, 0.02 + 0.01);

  const auto record = ledger.CloseIdle("w1", 130, "leased");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->worker_id, "w1");
  EXPECT_EQ(record->after_study_id, 7);
  EXPECT_EQ(record->end_reason, "leased");
  EXPECT_DOUBLE_EQ(IdleDollars(*record), 0.03);
  EXPECT_EQ(ledger.IdleOf("w1"), nullptr);
  EXPECT_FALSE(ledger.CloseIdle("w1", 140, "leased").has_value());
  // A stretch that lasted no time leaves no record, but is closed.
  ledger.OpenIdle("w1", 7, 150, 3.6, "spot");
  EXPECT_FALSE(ledger.CloseIdle("w1", 150, "shutdown").has_value());
  EXPECT_EQ(ledger.IdleOf("w1"), nullptr);
  ledger.ForgetWorker("w3");
  EXPECT_EQ(ledger.IdleOf("w3"), nullptr);
}

}  // namespace ledger_test
}  // namespace sift::coordinator

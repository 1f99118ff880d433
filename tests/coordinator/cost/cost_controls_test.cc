// Cost controls without gRPC: the forecast (pure), which alerts are due, the alert command
// runner, alerts recorded once across a restart, quotas across studies and the rollup by tag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "coordinator/core/coordinator.h"
#include "coordinator/cost/alert_command.h"
#include "coordinator/cost/alerts.h"
#include "coordinator/cost/forecast.h"
#include "coordinator/report/report_cost.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace sift::coordinator {
namespace cost_controls_test {

using search::Action;

SegmentRecord Segment(int64_t n, double start, std::optional<double> end) {
  SegmentRecord s;
  s.lease_id = "L" + std::to_string(n) + "-" + std::to_string(start);
  s.study_id = 1;
  s.number = n;
  s.start = start;
  s.end = end;
  s.price_per_hour = 3600;  // a dollar a second
  return s;
}

ForecastInput Input(int64_t max_trials) {
  ForecastInput in;
  in.start = 0;
  in.budget.max_trials = max_trials;
  return in;
}

// ---- forecast ---------------------------------------------------------------------------------

TEST(Forecast, MeanEndedTrialAndPaceGiveTheDollarsAndTimeToFinish) {
  ForecastInput in = Input(10);
  // Four trials ended by t=40, each $2; a fifth has run $1 of its expected $2.
  std::vector<SegmentRecord> segs;
  for (int i = 0; i < 4; ++i) {
    in.trials.push_back({10.0 * i, 10.0 * i + 10, 0.5});
    segs.push_back(Segment(i, 10.0 * i + 8, 10.0 * i + 10));
  }
  in.trials.push_back({40, std::nullopt, std::nullopt});
  segs.push_back(Segment(4, 39, std::nullopt));
  const Forecast f = MakeForecast(in, segs, 40);
  ASSERT_TRUE(f.possible);
  EXPECT_DOUBLE_EQ(f.spent, 9);
  EXPECT_EQ(f.trials_ended, 4);
  EXPECT_EQ(f.trials_left, 6);
  // $9 spent + 5 trials not begun at $2 + $1 more for the running one.
  EXPECT_DOUBLE_EQ(f.dollars, 20);
  EXPECT_DOUBLE_EQ(f.finish_at, 40 + 6 / (4.0 / 40));  // 0.1 trials a second, 6 to go
  EXPECT_EQ(f.limited_by, "");
  EXPECT_FALSE(f.target.has_value());
  // A $15 budget runs out first, at the pace of spending so far ($9 in 40 s).
  in.budget.max_dollars = 15;
  const Forecast g = MakeForecast(in, segs, 40);
  EXPECT_EQ(g.limited_by, "max_dollars");
  EXPECT_DOUBLE_EQ(g.dollars, 15);
  EXPECT_NEAR(g.finish_at, 40 + 6 / (9.0 / 40), 1e-9);
  // Nothing ended yet: no forecast.
  EXPECT_FALSE(MakeForecast(in, segs, 9).possible);
}

TEST(Forecast, TargetReachedIsWhenTheFirstTrialAtOrPastItEnded) {
  ForecastInput in = Input(10);
  in.target = 0.8;
  std::vector<SegmentRecord> segs;
  const double scores[] = {0.6, 0.85, 0.9};
  for (int i = 0; i < 3; ++i) {
    in.trials.push_back({10.0 * i, 10.0 * i + 10, scores[i]});
    segs.push_back(Segment(i, 10.0 * i + 9, 10.0 * i + 10));  // $1 each
  }
  const Forecast f = MakeForecast(in, segs, 30);
  ASSERT_TRUE(f.target.has_value());
  EXPECT_TRUE(f.target->reached);
  EXPECT_DOUBLE_EQ(f.target->dollars, 2);  // trial 0 and trial 1 paid
  EXPECT_DOUBLE_EQ(f.target->at, 20);
  // Minimising: a loss target is reached at or below it.
  in.maximize = false;
  in.target = 0.6;
  const Forecast g = MakeForecast(in, segs, 30);
  EXPECT_TRUE(g.target->reached);
  EXPECT_DOUBLE_EQ(g.target->dollars, 1);
}

TEST(Forecast, TargetNotReachedIsEstimatedFromANormalFitOfTheScores) {
  ForecastInput in = Input(8);
  std::vector<SegmentRecord> segs;
  // Mean 0.5, sample standard deviation 0.1 (0.4, 0.5, 0.6): a target of 0.6 is z = 1.
  const double scores[] = {0.4, 0.5, 0.6};
  for (int i = 0; i < 3; ++i) {
    in.trials.push_back({10.0 * i, 10.0 * i + 10, scores[i]});
    segs.push_back(Segment(i, 10.0 * i + 8, 10.0 * i + 10));  // $2 each
  }
  in.target = 0.6 + 1e-9;
  Forecast f = MakeForecast(in, segs, 30);
  ASSERT_TRUE(f.target && f.target->estimable);
  EXPECT_FALSE(f.target->reached);
  const double p = 0.5 * std::erfc(1 / std::sqrt(2.0));  // 15.9%
  EXPECT_NEAR(f.target->chance_per_trial, p, 1e-6);
  EXPECT_NEAR(f.target->chance_in_budget, 1 - std::pow(1 - p, 5), 1e-6);  // 5 trials left
  EXPECT_NEAR(f.target->trials_needed, 1 / p, 1e-4);
  EXPECT_NEAR(f.target->dollars, 6 + 2 / p, 1e-3);      // $6 spent, $2 a trial
  EXPECT_NEAR(f.target->at, 30 + (1 / p) / 0.1, 1e-2);  // a trial every 10 s
  // Fewer than kMinScoredForTarget scores: no estimate.
  f = MakeForecast(in, segs, 25);
  EXPECT_FALSE(f.target->estimable);
  // Identical scores below the target: out of reach.
  for (auto& t : in.trials) t.value = 0.5;
  f = MakeForecast(in, segs, 30);
  EXPECT_TRUE(f.target->estimable);
  EXPECT_EQ(f.target->chance_per_trial, 0);
  EXPECT_TRUE(std::isinf(f.target->trials_needed));
  EXPECT_NE(FormatForecast(f, "val_accuracy").find("out of reach"), std::string::npos);
}

TEST(Forecast, JsonRoundTripsIncludingAnUnreachableTarget) {
  Forecast f;
  f.possible = true;
  f.at = 100;
  f.spent = 1.5;
  f.dollars = 4.25;
  f.finish_at = 400;
  f.trials_ended = 3;
  f.trials_left = 5;
  f.limited_by = "max_dollars";
  TargetForecast t;
  t.target = 0.9;
  t.estimable = true;
  t.trials_needed = std::numeric_limits<double>::infinity();
  f.target = t;
  const auto back = ForecastFromJson(ForecastToJson(f));
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ(back->dollars, 4.25);
  EXPECT_DOUBLE_EQ(back->finish_at, 400);
  EXPECT_EQ(back->trials_left, 5);
  EXPECT_EQ(back->limited_by, "max_dollars");
  ASSERT_TRUE(back->target.has_value());
  EXPECT_TRUE(std::isinf(back->target->trials_needed));
  EXPECT_FALSE(ForecastFromJson("not json").has_value());
}

// ---- which alerts are due ---------------------------------------------------------------------

TEST(CostAlerts, EachThresholdIsDueOnceWhenReached) {
  common::AlertConfig alerts;  // 50, 80, 100
  std::set<std::string> recorded;
  EXPECT_TRUE(DueBudgetAlerts(alerts, 4.99, 10, recorded).empty());
  auto due = DueBudgetAlerts(alerts, 8.5, 10, recorded);  // 50 and 80 at once
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].key, "budget:50");
  EXPECT_EQ(due[1].key, "budget:80");
  EXPECT_EQ(due[1].message, "80% of the budget spent: $8.5000 of $10.0000");
  recorded = {"budget:50", "budget:80"};
  EXPECT_TRUE(DueBudgetAlerts(alerts, 9.9, 10, recorded).empty());
  due = DueBudgetAlerts(alerts, 10, 10, recorded);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].key, "budget:100");
  EXPECT_TRUE(DueBudgetAlerts(alerts, 100, 0, {}).empty());  // no dollar budget: none
}

TEST(CostAlerts, TheForecastAlertNeedsTwoEndedTrialsAndABudgetThatEndsTheStudy) {
  common::AlertConfig alerts;
  common::BudgetConfig budget;
  budget.max_dollars = 10;
  Forecast f;
  f.possible = true;
  f.trials_ended = 1;
  f.limited_by = "max_dollars";
  EXPECT_FALSE(DueForecastAlert(alerts, f, budget, {}).has_value());
  f.trials_ended = 2;
  auto due = DueForecastAlert(alerts, f, budget, {});
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->key, "forecast:over-budget");
  EXPECT_NE(due->message.find("the $10.0000 budget runs out before the study finishes"),
            std::string::npos);
  EXPECT_FALSE(DueForecastAlert(alerts, f, budget, {"forecast:over-budget"}).has_value());
  f.limited_by = "";
  EXPECT_FALSE(DueForecastAlert(alerts, f, budget, {}).has_value());
  f.limited_by = "max_dollars";
  alerts.forecast = false;
  EXPECT_FALSE(DueForecastAlert(alerts, f, budget, {}).has_value());
}

TEST(CostAlerts, EventsRecordTheirKeysAndForecastsForTheNextCoordinator) {
  CostFacts facts{7, "s", {{"team", "vision"}}, 50, 5.2, {}};
  facts.budget.max_dollars = 10;
  common::AlertConfig alerts;
  const auto due = DueBudgetAlerts(alerts, 5.2, 10, {});
  ASSERT_EQ(due.size(), 1u);
  Forecast f;
  f.possible = true;
  f.dollars = 12;
  f.trials_ended = 2;
  // Past 25% and 50% at once: one forecast, the 50% point's, made at 52%.
  const auto record = DueForecastRecord(0.52, f, {});
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->key, "forecast:50");
  EXPECT_FALSE(DueForecastRecord(0.60, f, {"forecast:50"}).has_value());
  EXPECT_FALSE(DueForecastPoint(0.60, {"forecast:50"}).has_value());
  EXPECT_EQ(DueForecastPoint(0.30, {}), 25);
  EXPECT_EQ(DueForecastPoint(0.55, {"forecast:25"}), 50);
  EXPECT_FALSE(DueForecastPoint(0.20, {}).has_value());
  std::vector<StudyEventRecord> events = {
      {7, 50, "coordinator", "alert", CostEventJson(due[0], facts)},
      {7, 50, "coordinator", "forecast", CostEventJson(*record, facts)},
      {7, 51, "ana", "budget", R"({"max_dollars":20})"}};
  EXPECT_EQ(RecordedCostKeys(events), (std::set<std::string>{"budget:50", "forecast:50"}));
  const auto recorded = RecordedForecasts(events);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_DOUBLE_EQ(recorded[0].percent, 52);
  EXPECT_DOUBLE_EQ(recorded[0].forecast.dollars, 12);
  EXPECT_EQ(CostEventMessage(events[0]), "50% of the budget spent: $5.2000 of $10.0000");
  EXPECT_EQ(CostEventMessage(events[2]), "");
  const auto j = nlohmann::json::parse(CostEventJson(due[0], facts));
  EXPECT_EQ(j["study"]["tags"]["team"], "vision");
  EXPECT_DOUBLE_EQ(j["threshold_percent"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(j["percent_spent"].get<double>(), 52);
}

TEST(CostAlerts, AnEndedStudysRecordedForecastsAreSetAgainstWhatHappened) {
  Forecast f;
  f.possible = true;
  f.at = 1100;
  f.spent = 2.5;
  f.dollars = 11;
  f.finish_at = 5000;
  f.trials_ended = 4;
  CostEvent e{"forecast", "forecast:25", "recorded-forecast", 25, "m", f};
  StudySummary s;
  s.record.created_at = 1000;
  s.record.ended_at = 4000;  // 3000 s; the forecast said 4000 s
  s.record.state = StudyState::kCompleted;
  s.dollars = 10;  // the forecast said $11
  s.events = {{1, 1100, "coordinator", "forecast", CostEventJson(e, CostFacts{})}};
  const auto lines = ForecastVersusActual(s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "forecast at 25% (4 trials ended, $2.5000 spent): $11.0000 in total, done "
            "after 66.7 min; actual $10.0000 (forecast 10% high), after 50.0 min "
            "(forecast 33% late)");
  StudyReport r;
  r.study = s;
  r.study.tags = {{"team", "vision"}};
  EXPECT_EQ(FormatCostSummary(r), "tags: team=vision\n" + lines[0] + "\n");
  // Regression: "(-16%)" read as the actual being under the forecast; it was the forecast.
  s.dollars = 13.1;
  s.record.ended_at = 5000;
  const auto under = ForecastVersusActual(s);
  ASSERT_EQ(under.size(), 1u);
  EXPECT_NE(under[0].find("actual $13.1000 (forecast 16% low), after 66.7 min (forecast on the "
                          "mark)"),
            std::string::npos)
      << under[0];
}

// ---- the command runner -----------------------------------------------------------------------

TEST(AlertCommand, GetsTheFactsOnStdinAndReportsFailuresAndTimeouts) {
  std::string output;
  EXPECT_EQ(RunWithInput({"/bin/sh", "-c", "cat; echo done"}, "{\"a\":1}\n", 5, &output), "");
  EXPECT_EQ(output, "{\"a\":1}\ndone");
  EXPECT_EQ(RunWithInput({"/bin/sh", "-c", "echo nope >&2; exit 3"}, "", 5, &output),
            "exited with 3");
  EXPECT_EQ(output, "nope");
  const auto start = std::chrono::steady_clock::now();
  // The shell's child (sleep) is killed with it: the whole group.
  EXPECT_EQ(RunWithInput({"/bin/sh", "-c", "sleep 30; true"}, "", 0.3, &output),
            "killed after 0.3 s (timeout)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(RunWithInput({"/no/such/program"}, "", 1, &output).find("cannot start"),
            std::string::npos);
  // A command that exits without reading its stdin is not an error of the coordinator's.
  EXPECT_EQ(RunWithInput({"/bin/true"}, std::string(100000, 'x'), 5, &output), "");
}

// ---- the coordinator --------------------------------------------------------------------------

std::string Config(const std::string& name, const std::string& extra, double max_dollars = 0.1) {
  return "name: " + name +
         "\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "trainer: {model: mlp}\n"
         "budget: {max_trials: 50, max_epochs: 100, max_dollars: " +
         std::to_string(max_dollars) + "}\n" + extra;
}

class CostControlsTest : public testing::CoordinatorFixture {
 protected:
  CostControlsTest() : CoordinatorFixture("sift-cost") {}
  void SetUp() override {
    CoordinatorFixture::SetUp();
    Open();
  }
  void Open(std::vector<Quota> quotas = {}) {
    CoordinatorOptions o;
    o.lease_timeout_s = 1000;
    o.quotas = std::move(quotas);
    Reopen(o);
  }
  std::string Worker() { return CoordinatorFixture::Worker(3.6, "on-demand"); }
  std::vector<std::string> Keys(int64_t id, const std::string& action) {
    StudySummary s;
    EXPECT_TRUE(c_->GetStudy(id, &s).ok());
    std::vector<std::string> out;
    for (const auto& e : s.events) {
      if (e.action != action) continue;
      out.push_back(nlohmann::json::parse(e.detail)["key"].get<std::string>());
    }
    return out;
  }
};

TEST_F(CostControlsTest, BudgetAlertsFireOnceEachAcrossARestartAndRunTheirCommand) {
  const std::string log = db_.string() + ".alerts";
  std::filesystem::remove(log);
  const int64_t id =
      Study(Config("alerted", "alerts: {command: 'cat >> " + log + "', forecast: false}\n"));
  std::string w = Worker();
  Assignment a = Acquire(w);
  clock_.Advance(49);  // $0.049 of $0.10
  c_->Tick();
  EXPECT_TRUE(Keys(id, "alert").empty());
  clock_.Advance(2);  // $0.051
  c_->Tick();
  c_->Tick();
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"budget:50"}));
  // A restart (the lease is restored and keeps accruing): 50 is not fired again.
  Open();
  c_->Tick();
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"budget:50"}));
  clock_.Advance(30);  // $0.081
  std::vector<std::string> revoked;
  ASSERT_TRUE(c_->Heartbeat(w, {a.lease_id}, &revoked).ok());
  c_->Tick();
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"budget:50", "budget:80"}));
  clock_.Advance(20);  // $0.101
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());
  EXPECT_EQ(d.action, Action::kStop);  // the budget itself
  c_->Tick();
  Open();
  c_->Tick();
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"budget:50", "budget:80", "budget:100"}));
  c_.reset();  // waits for the queued commands
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["key"], "budget:100");
  EXPECT_EQ(nlohmann::json::parse(lines[2])["study"]["name"], "alerted");
  std::filesystem::remove(log);
}

TEST_F(CostControlsTest, ForecastIsInTheSummaryAndRecordedAt25And50PercentOnce) {
  const int64_t id = Study(Config("forecast", "objective: {metric: val_accuracy, target: 0.99}\n",
                                  /*max_dollars=*/0.1));
  std::string w = Worker();
  for (int i = 0; i < 3; ++i) {
    Assignment a = Acquire(w);
    clock_.Advance(10);  // $0.01 a trial
    search::Decision d;
    ASSERT_TRUE(
        c_->ReportProgress(w, a.lease_id, 1, 1, {{"val_accuracy", 0.5 + 0.1 * i}}, "", &d).ok());
    ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "x").ok());
    c_->Tick();
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  ASSERT_TRUE(s.forecast.has_value());
  EXPECT_GE(s.forecast->trials_ended, 2);
  ASSERT_TRUE(s.forecast->target.has_value());
  EXPECT_DOUBLE_EQ(s.forecast->target->target, 0.99);
  // $0.03 spent of $0.10: the 25% forecast is recorded, the 50% one not yet.
  EXPECT_EQ(Keys(id, "forecast"), (std::vector<std::string>{"forecast:25"}));
  // At this pace the 50 trials cost far more than $0.10: the forecast alert fires, once.
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"forecast:over-budget"}));
  for (int i = 0; i < 3; ++i) {
    Assignment a = Acquire(w);
    clock_.Advance(10);
    ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "x").ok());
    clock_.Advance(10);
    c_->Tick();
  }
  EXPECT_EQ(Keys(id, "forecast"), (std::vector<std::string>{"forecast:25", "forecast:50"}));
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"forecast:over-budget", "budget:50"}));
}

TEST_F(CostControlsTest, AQuotaLimitsEveryStudyWithTheTagTogether) {
  Open({Quota{"team", "vision", 0.05}});
  const int64_t a_id = Study(Config("a", "tags: {team: vision}\n", 0));
  const int64_t b_id = Study(Config("b", "tags: {team: vision, project: x}\n", 0));
  const int64_t other = Study(Config("c", "tags: {team: ads}\n", 0));
  std::string w1 = Worker(), w2 = Worker(), w3 = Worker();
  Assignment a = Acquire(w1);
  ASSERT_EQ(a.study_id, a_id);
  Assignment b = Acquire(w2);
  ASSERT_EQ(b.study_id, a_id);  // the first study takes work first
  clock_.Advance(20);           // $0.04 by the two leases together
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w1, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());
  EXPECT_EQ(d.action, Action::kContinue);
  ASSERT_TRUE(c_->FailTrial(w2, b.lease_id, "x").ok());
  // Study b's trial and study a's together spend past the quota.
  Assignment b2 = Acquire(w2);
  EXPECT_EQ(b2.study_id, a_id);
  clock_.Advance(10);  // $0.04 closed + $0.01 + $0.01 open = $0.06
  ASSERT_TRUE(c_->ReportProgress(w1, a.lease_id, 2, 2, {{"val_accuracy", 0.6}}, "", &d).ok());
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_NE(d.reason.find("quota team=vision: $0.0600 spent of $0.0500"), std::string::npos)
      << d.reason;
  ASSERT_TRUE(c_->CompleteTrial(w1, a.lease_id, {}).ok());
  // No new work for either vision study; the ads study is not limited.
  Assignment c = Acquire(w3);
  EXPECT_EQ(c.study_id, other);
  ASSERT_TRUE(c_->FailTrial(w2, b2.lease_id, "x").ok());
  c_->Tick();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(b_id, &s).ok());
  EXPECT_EQ(s.total, 0);
  EXPECT_NE(s.record.state, StudyState::kRunning);
  EXPECT_NE(s.record.end_reason.find("quota team=vision"), std::string::npos)
      << s.record.end_reason;
  ASSERT_TRUE(c_->GetStudy(a_id, &s).ok());
  EXPECT_NE(s.record.end_reason.find("quota team=vision"), std::string::npos)
      << s.record.end_reason;
  // A new vision study is refused while the quota is spent.
  int64_t id = 0;
  std::vector<std::string> errors;
  Status refused =
      c_->CreateStudy(Config("d", "tags: {team: vision}\n", 0), "d.yaml", &id, &errors);
  EXPECT_EQ(refused.code, Status::Code::kResourceExhausted);
  EXPECT_NE(refused.message.find("quota team=vision"), std::string::npos) << refused.message;
}

// Regression: a trial requeued by a preemption after the budget was spent kept the study open
// for ever (PickNext never leased it again; Finished waited for it).
TEST_F(CostControlsTest, ASpentBudgetEndsTheStudyEvenWithARequeuedTrial) {
  const int64_t id = Study(Config("spent", "", /*max_dollars=*/0.01));
  std::string w = Worker();
  Assignment a = Acquire(w);
  clock_.Advance(20);  // $0.02 of $0.01
  ASSERT_TRUE(c_->PreemptTrial(w, a.lease_id, "", "spot notice").ok());
  c_->Tick();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_NE(s.record.end_reason.find("budget: $0.0200 spent of $0.0100"), std::string::npos)
      << s.record.end_reason;
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].record.state, search::TrialState::kStopped);
}

// Regression: a budget lowered below the spend ended the study at once, before any tick fired
// the thresholds it crossed, and called a trial that had trained an epoch "never run".
TEST_F(CostControlsTest, ALoweredBudgetAnnouncesEveryCrossedThresholdBeforeItEnds) {
  const int64_t id = Study(Config("lowered", "alerts: {forecast: false}\n", /*max_dollars=*/1.0));
  std::string w = Worker();
  Assignment a = Acquire(w);
  clock_.Advance(20);  // $0.02 of $1
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());
  ASSERT_TRUE(c_->PreemptTrial(w, a.lease_id, "", "spot notice").ok());  // back to PENDING
  c_->Tick();
  EXPECT_TRUE(Keys(id, "alert").empty());
  ASSERT_TRUE(c_->UpdateBudget(id, {0.01, std::nullopt, std::nullopt}, "alice").ok());
  EXPECT_EQ(Keys(id, "alert"), (std::vector<std::string>{"budget:50", "budget:80", "budget:100"}));
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].record.state, search::TrialState::kStopped);
  EXPECT_EQ(trials[0].record.end_reason.find("never run"), std::string::npos)
      << trials[0].record.end_reason;
  EXPECT_NE(trials[0].record.end_reason.find("not resumed after epoch 1: budget"),
            std::string::npos)
      << trials[0].record.end_reason;
}

TEST_F(CostControlsTest, RollupByTagSumsTheStudiesOfEachTag) {
  std::string w = Worker();
  const int64_t a = Study(Config("a", "tags: {team: vision, project: p1}\n", 0));
  Study(Config("b", "tags: {team: vision}\n", 0));
  Study(Config("c", "", 0));
  (void)a;
  for (int i = 0; i < 3; ++i) {
    Assignment t = Acquire(w);
    clock_.Advance(10 * (i + 1));
    search::Decision d;
    ASSERT_TRUE(
        c_->ReportProgress(w, t.lease_id, 1, 1, {{"val_accuracy", 0.1 * (i + 1)}}, "", &d).ok());
    ASSERT_TRUE(c_->CancelStudy(t.study_id).ok());
    ASSERT_TRUE(c_->CompleteTrial(w, t.lease_id, {}).ok());
  }
  const auto studies = c_->ListStudies();
  ASSERT_EQ(studies.size(), 3u);
  auto rows = RollUpByTag(studies, "team");
  const auto row = [&](const std::string& tag) {
    for (const auto& r : rows) {
      if ((r.key.empty() ? r.value : r.key + "=" + r.value) == tag) return r;
    }
    ADD_FAILURE() << "no row " << tag;
    return TagRollup{};
  };
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(row("team=vision").studies, 2);
  EXPECT_EQ(row("team=vision").trials, 2);
  EXPECT_NEAR(row("team=vision").dollars, 0.010 + 0.020, 1e-9);
  EXPECT_NEAR(row("team=vision").best.at("val_accuracy").value, 0.2, 1e-12);
  EXPECT_EQ(row("team=vision").best.at("val_accuracy").study, 2);
  EXPECT_EQ(row("team=(no team tag)").studies, 1);
  EXPECT_NEAR(row("team=(no team tag)").dollars, 0.030, 1e-9);
  rows = RollUpByTag(studies, "");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(row("(untagged)").studies, 1);
  EXPECT_EQ(row("project=p1").studies, 1);
  EXPECT_NEAR(row("project=p1").dollars, 0.010, 1e-9);
  EXPECT_EQ(row("team=vision").studies, 2);
  const std::string text = FormatTagRollup(rows, studies);
  EXPECT_NE(text.find("team=vision"), std::string::npos) << text;
  EXPECT_NE(text.find("total"), std::string::npos) << text;
  std::string key;
  EXPECT_EQ(ParseByTag("tag", &key), "");
  EXPECT_EQ(key, "");
  EXPECT_EQ(ParseByTag("tag:team", &key), "");
  EXPECT_EQ(key, "team");
  EXPECT_NE(ParseByTag("study", &key).find("must be tag"), std::string::npos);
  EXPECT_NE(ParseByTag("tag:9x", &key).find("starts with a letter"), std::string::npos);
}

}  // namespace cost_controls_test
}  // namespace sift::coordinator

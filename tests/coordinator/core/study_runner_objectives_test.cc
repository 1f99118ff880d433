// StudyRunner with several objectives and constraints (issue 26): every report's objective and
// constraint values reach the view the searcher and scheduler read, a decision sees them and puts
// the view back, a bound on a metric that only grows stops the trial crossing it, and a restart
// replays the same view. Real config, searcher and scheduler; no Coordinator.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "coordinator/core/study_runner.h"
#include "coordinator/core/summaries.h"

namespace sift::coordinator {
namespace study_runner_objectives_test {

using search::Action;
using search::TrialState;
using Metrics = std::map<std::string, double>;

constexpr double kT0 = 1'000'000;

common::StudyConfig Config(const std::string& extra) {
  const std::string text =
      "name: frontier\n"
      "objectives:\n"
      "  - {metric: val_accuracy, direction: maximize}\n"
      "  - {metric: dollars}\n"
      "search_space:\n"
      "  lr: {type: float, low: 0.0001, high: 0.1, scale: log}\n"
      "seed: 11\n" +
      extra;
  common::StudyConfig config;
  const auto errors = common::ParseStudyConfig(text, "frontier.yaml", &config);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return config;
}

int64_t Lease(StudyRunner& r) {
  std::string why;
  auto next = r.PickNext(kT0, 0, &why);
  EXPECT_TRUE(next.has_value()) << why;
  if (!next) return -1;
  if (next->is_new) r.ApplyNewTrial(next->number, next->params);
  r.ApplyState(next->number, TrialState::kRunning);
  return next->number;
}

// Decided, then applied as the Coordinator applies it once stored.
search::Decision Report(StudyRunner& r, int64_t number, int64_t epoch, const Metrics& m) {
  search::Decision d = r.Decide(number, epoch, m, kT0, 0);
  r.ApplyReport(number, epoch, m);
  if (d.action == Action::kStop) r.ApplyState(number, TrialState::kStopped);
  return d;
}

TEST(StudyRunnerObjectives, EveryObjectiveAndConstraintReachesTheView) {
  StudyRunner r(1,
                Config("constraints:\n  - {metric: inference_ms, max: 2}\n"
                       "  - {metric: params, max: 1.0e6}\n"),
                kT0);
  ASSERT_EQ(r.view().objectives.size(), 2u);
  ASSERT_EQ(r.view().constraints.size(), 2u);
  const int64_t n = Lease(r);
  Report(r, n, 1,
         {{"val_accuracy", 0.8}, {"dollars", 0.1}, {"inference_ms", 1.5}, {"params", 5000}});
  const auto& t = r.view().trials.at(n);
  EXPECT_EQ(t.values.at(1), 0.8);
  ASSERT_EQ(t.more_values.size(), 1u);
  EXPECT_EQ(t.more_values[0].at(1), 0.1);
  ASSERT_EQ(t.constraint_values.size(), 2u);
  EXPECT_EQ(t.constraint_values[0].at(1), 1.5);
  EXPECT_EQ(t.constraint_values[1].at(1), 5000);
  // A report without a second objective leaves it missing there; a non-finite objective never
  // enters the view, a non-finite constraint value does (it violates the constraint).
  Report(r, n, 2, {{"val_accuracy", 0.82}, {"inference_ms", NAN}});
  EXPECT_EQ(t.more_values[0].count(2), 0u);
  EXPECT_TRUE(std::isnan(t.constraint_values[0].at(2)));
  Report(r, n, 3, {{"val_accuracy", INFINITY}, {"dollars", 0.3}});
  EXPECT_EQ(t.values.count(3), 0u);
  EXPECT_EQ(t.more_values[0].at(3), 0.3);
}

TEST(StudyRunnerObjectives, ADecisionSeesTheReportAndPutsTheViewBack) {
  StudyRunner r(1, Config(""), kT0);
  const int64_t n = Lease(r);
  r.Decide(n, 1, {{"val_accuracy", 0.7}, {"dollars", 0.2}}, kT0, 0);
  const auto& t = r.view().trials.at(n);
  EXPECT_TRUE(t.values.empty());
  EXPECT_TRUE(t.more_values.at(0).empty());
}

TEST(StudyRunnerObjectives, AMaxOnAMetricThatOnlyGrowsStopsTheTrialCrossingIt) {
  StudyRunner r(1,
                Config("constraints:\n  - {metric: dollars, max: 0.5}\n"
                       "  - {metric: params, max: 1000}\n"),
                kT0);
  const int64_t n = Lease(r);
  // params may shrink in no later epoch either, but it is not a budget: the rank handles it.
  EXPECT_EQ(Report(r, n, 1, {{"val_accuracy", 0.7}, {"dollars", 0.4}, {"params", 5000}}).action,
            Action::kContinue);
  const search::Decision d =
      Report(r, n, 2, {{"val_accuracy", 0.75}, {"dollars", 0.625}, {"params", 5000}});
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "constraint dollars <= 0.5 crossed (0.625): it can only grow");
}

TEST(StudyRunnerObjectives, MeasuredMetricsAreTheTrialsCostSoFar) {
  StudyRunner r(1, Config("constraints:\n  - {metric: train_seconds, max: 600}\n"), kT0);
  EXPECT_TRUE(r.MeasuresCost());
  const int64_t n = Lease(r);
  r.ApplyCost(n, 1.0, 30);  // an ended lease
  Metrics m{{"val_accuracy", 0.5}};
  r.AddMeasured(n, 0.25, 10, &m);
  EXPECT_EQ(m, (Metrics{{"val_accuracy", 0.5}, {"dollars", 1.25}, {"train_seconds", 40}}));

  common::StudyConfig plain;
  ASSERT_TRUE(common::ParseStudyConfig("name: p\nsearch_space:\n  lr: {type: float, low: 0.1, "
                                       "high: 0.2}\nconstraints: [{metric: params, max: 9}]\n",
                                       "p.yaml", &plain)
                  .empty());
  StudyRunner p(2, plain, kT0);
  EXPECT_FALSE(p.MeasuresCost());
  Metrics unchanged{{"val_accuracy", 0.5}};
  p.AddMeasured(Lease(p), 0.25, 10, &unchanged);
  EXPECT_EQ(unchanged, (Metrics{{"val_accuracy", 0.5}}));
}

// Four trials reach ASHA's first rung (eta 2: the top two go on). Trial 2 is the least accurate
// but the cheapest, so it is on the Pareto front: MO-ASHA keeps it where ASHA on accuracy alone
// stops it.
TEST(StudyRunnerObjectives, MoAshaKeepsACheapTrialThatAccuracyAloneWouldStop) {
  const std::string rest =
      "scheduler: {type: asha, eta: 2}\n"
      "budget: {max_trials: 4, max_epochs: 4}\n";
  const std::vector<Metrics> first = {{{"val_accuracy", 0.5}, {"dollars", 1.0}},
                                      {{"val_accuracy", 0.9}, {"dollars", 0.1}},
                                      {{"val_accuracy", 0.3}, {"dollars", 3.0}},
                                      {{"val_accuracy", 0.4}, {"dollars", 0.01}}};
  StudyRunner r(1, Config(rest), kT0);
  std::vector<search::Decision> decided;
  for (const auto& m : first) decided.push_back(Report(r, Lease(r), 1, m));
  EXPECT_EQ(decided[3].action, Action::kContinue) << decided[3].reason;

  common::StudyConfig single;
  ASSERT_TRUE(common::ParseStudyConfig("name: s\nsearch_space:\n  lr: {type: float, low: 0.0001, "
                                       "high: 0.1, scale: log}\nseed: 11\n" +
                                           rest,
                                       "s.yaml", &single)
                  .empty());
  StudyRunner s(2, single, kT0);
  search::Decision last;
  for (const auto& m : first) last = Report(s, Lease(s), 1, m);
  EXPECT_EQ(last.action, Action::kStop) << last.reason;
}

TEST(StudyRunnerObjectives, ARestartReplaysEveryObjectiveAndConstraint) {
  const std::string rest =
      "constraints:\n  - {metric: inference_ms, max: 2}\n"
      "scheduler: {type: median, min_trials: 2}\n"
      "budget: {max_trials: 6, max_epochs: 3}\n";
  StudyRunner r(1, Config(rest), kT0);
  std::vector<TrialRecord> trials;
  std::vector<ReportRecord> reports;
  for (int i = 0; i < 4; ++i) {
    const int64_t n = Lease(r);
    for (int64_t e = 1; e <= 2; ++e) {
      const Metrics m{{"val_accuracy", 0.5 + 0.05 * i + 0.01 * e},
                      {"dollars", 0.1 * (i + 1) * e},
                      {"inference_ms", 1.0 + i}};
      const auto d = Report(r, n, e, m);
      ReportRecord rec;
      rec.study_id = 1;
      rec.number = n;
      rec.epoch = e;
      rec.metrics = m;
      reports.push_back(rec);
      if (d.action == Action::kStop) break;
    }
  }
  for (const auto& t : r.view().trials) {
    TrialRecord rec;
    rec.study_id = 1;
    rec.number = t.number;
    rec.params = t.params;
    rec.state = t.state;
    trials.push_back(rec);
  }
  StudyRunner again(1, Config(rest), kT0);
  again.Restore(trials, reports);
  ASSERT_EQ(again.view().trials.size(), r.view().trials.size());
  for (size_t i = 0; i < r.view().trials.size(); ++i) {
    const auto& a = r.view().trials[i];
    const auto& b = again.view().trials[i];
    EXPECT_EQ(a.values, b.values) << i;
    EXPECT_EQ(a.more_values, b.more_values) << i;
    EXPECT_EQ(a.constraint_values, b.constraint_values) << i;
  }
  // The next report is decided alike, and the next suggestion is the same.
  const Metrics next{{"val_accuracy", 0.52}, {"dollars", 0.9}, {"inference_ms", 3}};
  const int64_t n1 = Lease(r), n2 = Lease(again);
  ASSERT_EQ(n1, n2);
  EXPECT_EQ(r.view().trials.at(n1).params, again.view().trials.at(n2).params);
  const auto d1 = r.Decide(n1, 1, next, kT0, 0);
  const auto d2 = again.Decide(n2, 1, next, kT0, 0);
  EXPECT_EQ(d1.action, d2.action);
  EXPECT_EQ(d1.reason, d2.reason);
}

TEST(StudyRunnerObjectives, TheSummaryCarriesTheParetoSetAndItsHypervolume) {
  StudyRunner r(1, Config("budget: {max_trials: 4, max_epochs: 1}\n"), kT0);
  StudyRecord record;
  record.id = 1;
  EXPECT_FALSE(SummarizeStudy(record, r, {}, {}, {}, 0, kT0).hypervolume.has_value());
  for (const Metrics& m : {Metrics{{"val_accuracy", 0.8}, {"dollars", 0.2}},
                           Metrics{{"val_accuracy", 0.9}, {"dollars", 0.5}},
                           Metrics{{"val_accuracy", 0.7}, {"dollars", 0.6}}}) {
    const int64_t n = Lease(r);
    Report(r, n, 1, m);
    r.ApplyState(n, TrialState::kCompleted);
  }
  Lease(r);  // running: not counted
  const StudySummary s = SummarizeStudy(record, r, {}, {}, {}, 0, kT0);
  ASSERT_EQ(s.objectives.size(), 2u);
  EXPECT_EQ(s.objectives[1].metric, "dollars");
  EXPECT_FALSE(s.objectives[1].maximize);
  EXPECT_EQ(s.pareto_trials, 2);
  // Oriented points (0.8, -0.2), (0.9, -0.5), (0.7, -0.6); the reference is 10% of each range
  // beyond the worst: (0.68, -0.64). Two boxes less their overlap.
  ASSERT_TRUE(s.hypervolume.has_value());
  EXPECT_NEAR(*s.hypervolume, 0.12 * 0.44 + 0.22 * 0.14 - 0.12 * 0.14, 1e-12);
}

// The summary's best trial (the closing text's "best trial", the one whose model is exported and
// test-scored) kept to the constraints when any trial did, though another scored higher.
TEST(StudyRunnerObjectives, TheBestTrialIsTheBestThatKeptItsConstraints) {
  StudyRunner r(1,
                Config("constraints:\n  - {metric: params, max: 1000}\n"
                       "budget: {max_trials: 3, max_epochs: 1}\n"),
                kT0);
  StudyRecord record;
  record.id = 1;
  for (const Metrics& m : {Metrics{{"val_accuracy", 0.8}, {"dollars", 0.2}, {"params", 900}},
                           Metrics{{"val_accuracy", 0.9}, {"dollars", 0.1}, {"params", 5000}},
                           Metrics{{"val_accuracy", 0.7}, {"dollars", 0.1}, {"params", 100}}}) {
    const int64_t n = Lease(r);
    Report(r, n, 1, m);
    r.ApplyState(n, TrialState::kCompleted);
  }
  const StudySummary s = SummarizeStudy(record, r, {}, {}, {}, 0, kT0);
  ASSERT_TRUE(s.best_trial.has_value());
  EXPECT_EQ(*s.best_trial, 0);
  EXPECT_DOUBLE_EQ(s.best_value, 0.8);
}

}  // namespace study_runner_objectives_test
}  // namespace sift::coordinator

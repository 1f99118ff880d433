// Every domain type the wire carries, there and back: what the CLI prints must be what the
// coordinator sent. Each field is set to a value of its own, so a field dropped or swapped on
// either side fails here by name.
#include <gtest/gtest.h>

#include <limits>

#include "common/wire/proto_convert.h"
#include "coordinator/rpc/study_proto.h"
#include "coordinator/rpc/trial_proto.h"

namespace sift::coordinator {
namespace proto_round_trip_test {

TEST(ProtoRoundTrip, ParamsKeepTheirTypeAndValue) {
  const search::Params params{{"lr", 3.0e-4},
                              {"tiny", std::numeric_limits<double>::denorm_min()},
                              {"hidden", int64_t{512}},
                              {"big", std::numeric_limits<int64_t>::max()},
                              {"negative", int64_t{-3}},
                              {"optimizer", std::string("adam")},
                              {"empty", std::string()}};
  google::protobuf::Map<std::string, v1::ParamValue> wire;
  common::ToProto(params, &wire);
  EXPECT_EQ(common::FromProto(wire), params);
}

StudySummary FullStudy(StudyState state) {
  StudySummary s;
  s.record.id = 7;
  s.record.name = "fashion";
  s.record.state = state;
  s.record.end_reason = "budget: $1.00 spent";
  s.metric = "val_loss";
  s.maximize = false;
  s.max_trials = 40;
  s.total = 12;
  s.finished = 9;
  s.running = 3;
  s.objectives = {{"val_loss", false}, {"dollars", false}, {"val_accuracy", true}};
  s.constraints = {{"params", 1e6, true}, {"val_accuracy", 0.8, false}};
  s.pareto_trials = 4;
  s.hypervolume = 0.125;
  s.best_trial = 5;
  s.best_value = 0.31;
  s.dollars = 1.25;
  s.wasted_dollars = 0.125;
  s.paused_wasted_dollars = 0.0625;
  s.dollars_by_market = {{"spot", 0.75}, {"on-demand", 0.5}};
  s.preemptions = 4;
  s.expirations = 2;
  s.idle_dollars = 0.03;
  s.idle_seconds = 95;
  s.budget.max_trials = 40;
  s.budget.max_dollars = 2.5;
  s.budget.max_hours = 1.5;
  s.events = {{7, 100.5, "ana", "paused", "{}"}, {7, 200.25, "bo", "resumed", ""}};
  s.tags = {{"team", "vision"}};
  s.target = 0.3;
  s.checkpoint_dir = "/ckpt/study-7";
  Forecast f;
  f.possible = true;
  f.at = 300;
  f.spent = 1.25;
  f.dollars = 2.0;
  f.finish_at = 900;
  f.trials_ended = 9;
  f.trials_left = 28;
  f.limited_by = "max_dollars";
  TargetForecast t;
  t.target = 0.3;
  t.estimable = true;
  t.chance_per_trial = 0.2;
  t.chance_in_budget = 0.9;
  t.trials_needed = 5;
  t.dollars = 1.75;
  t.at = 700;
  f.target = t;
  s.forecast = f;
  return s;
}

TEST(ProtoRoundTrip, AStudySummaryComesBackAsItWasSent) {
  for (StudyState state : {StudyState::kRunning, StudyState::kPaused, StudyState::kCompleted,
                           StudyState::kFailed, StudyState::kCancelled}) {
    const StudySummary sent = FullStudy(state);
    v1::Study wire;
    ToProto(sent, &wire);
    const StudySummary got = FromProto(wire);
    SCOPED_TRACE(ToString(state));
    EXPECT_EQ(got.record.id, sent.record.id);
    EXPECT_EQ(got.record.name, sent.record.name);
    EXPECT_EQ(got.record.state, sent.record.state);
    EXPECT_EQ(got.record.end_reason, sent.record.end_reason);
    EXPECT_EQ(got.metric, sent.metric);
    EXPECT_EQ(got.maximize, sent.maximize);
    EXPECT_EQ(got.max_trials, sent.max_trials);
    EXPECT_EQ(got.total, sent.total);
    EXPECT_EQ(got.finished, sent.finished);
    EXPECT_EQ(got.running, sent.running);
    EXPECT_EQ(got.best_trial, sent.best_trial);
    EXPECT_EQ(got.best_value, sent.best_value);
    EXPECT_EQ(got.dollars, sent.dollars);
    EXPECT_EQ(got.wasted_dollars, sent.wasted_dollars);
    EXPECT_EQ(got.paused_wasted_dollars, sent.paused_wasted_dollars);
    EXPECT_EQ(got.dollars_by_market, sent.dollars_by_market);
    EXPECT_EQ(got.preemptions, sent.preemptions);
    EXPECT_EQ(got.expirations, sent.expirations);
    EXPECT_EQ(got.idle_dollars, sent.idle_dollars);
    EXPECT_EQ(got.idle_seconds, sent.idle_seconds);
    EXPECT_EQ(got.budget.max_trials, sent.budget.max_trials);
    EXPECT_EQ(got.budget.max_dollars, sent.budget.max_dollars);
    EXPECT_EQ(got.budget.max_hours, sent.budget.max_hours);
    ASSERT_EQ(got.events.size(), sent.events.size());
    for (size_t i = 0; i < sent.events.size(); ++i) {
      EXPECT_EQ(got.events[i].study_id, sent.events[i].study_id);
      EXPECT_EQ(got.events[i].at, sent.events[i].at);
      EXPECT_EQ(got.events[i].user, sent.events[i].user);
      EXPECT_EQ(got.events[i].action, sent.events[i].action);
      EXPECT_EQ(got.events[i].detail, sent.events[i].detail);
    }
    EXPECT_EQ(got.tags, sent.tags);
    EXPECT_EQ(got.target, sent.target);
    EXPECT_EQ(got.checkpoint_dir, sent.checkpoint_dir);
    ASSERT_EQ(got.objectives.size(), sent.objectives.size());
    for (size_t i = 0; i < sent.objectives.size(); ++i) {
      EXPECT_EQ(got.objectives[i].metric, sent.objectives[i].metric);
      EXPECT_EQ(got.objectives[i].maximize, sent.objectives[i].maximize);
    }
    ASSERT_EQ(got.constraints.size(), sent.constraints.size());
    for (size_t i = 0; i < sent.constraints.size(); ++i) {
      EXPECT_EQ(got.constraints[i].metric, sent.constraints[i].metric);
      EXPECT_EQ(got.constraints[i].bound, sent.constraints[i].bound);
      EXPECT_EQ(got.constraints[i].upper, sent.constraints[i].upper);
    }
    EXPECT_EQ(got.pareto_trials, sent.pareto_trials);
    EXPECT_EQ(got.hypervolume, sent.hypervolume);
    ASSERT_TRUE(got.forecast.has_value());
    const Forecast& f = *got.forecast;
    const Forecast& w = *sent.forecast;
    EXPECT_EQ(f.possible, w.possible);
    EXPECT_EQ(f.at, w.at);
    EXPECT_EQ(f.spent, w.spent);
    EXPECT_EQ(f.dollars, w.dollars);
    EXPECT_EQ(f.finish_at, w.finish_at);
    EXPECT_EQ(f.trials_ended, w.trials_ended);
    EXPECT_EQ(f.trials_left, w.trials_left);
    EXPECT_EQ(f.limited_by, w.limited_by);
    ASSERT_TRUE(f.target.has_value());
    EXPECT_EQ(f.target->target, w.target->target);
    EXPECT_EQ(f.target->reached, w.target->reached);
    EXPECT_EQ(f.target->estimable, w.target->estimable);
    EXPECT_EQ(f.target->chance_per_trial, w.target->chance_per_trial);
    EXPECT_EQ(f.target->chance_in_budget, w.target->chance_in_budget);
    EXPECT_EQ(f.target->trials_needed, w.target->trials_needed);
    EXPECT_EQ(f.target->dollars, w.target->dollars);
    EXPECT_EQ(f.target->at, w.target->at);
  }
}

TEST(ProtoRoundTrip, AStudyWithoutBestTargetOrForecastSaysSo) {
  StudySummary sent;
  sent.record.id = 1;
  v1::Study wire;
  ToProto(sent, &wire);
  const StudySummary got = FromProto(wire);
  EXPECT_FALSE(got.best_trial.has_value());
  EXPECT_FALSE(got.target.has_value());
  EXPECT_FALSE(got.forecast.has_value());
  EXPECT_FALSE(got.hypervolume.has_value());
}

TEST(ProtoRoundTrip, ATrialSummaryComesBackAsItWasSent) {
  using search::TrialState;
  for (TrialState state :
       {TrialState::kPending, TrialState::kRunning, TrialState::kPaused, TrialState::kCompleted,
        TrialState::kStopped, TrialState::kFailed, TrialState::kDiverged}) {
    TrialSummary sent;
    sent.record.study_id = 7;
    sent.record.number = 3;
    sent.record.state = state;
    sent.record.params = {{"lr", 0.01}, {"hidden", int64_t{128}}, {"opt", std::string("sgd")}};
    sent.record.end_reason = "stopped by asha at rung 1";
    sent.record.final_metrics = {{"peak_rss_mb", 410.5}, {"train_loss", 0.2}};
    sent.dollars = 0.04;
    sent.seconds = 61.5;
    sent.wasted_dollars = 0.01;
    sent.segments = 3;
    sent.interruptions = 2;
    sent.objective = 0.88;
    sent.epochs = 4;
    sent.checkpoint = "trial-3-e4.ckpt";
    EvaluationRecord e;
    e.study_id = 7;
    e.number = 3;
    e.state = EvaluationState::kDone;
    e.requested_by = "best trial";
    e.metrics = {{"test_accuracy", 0.87}};
    e.error = "";
    sent.evaluation = e;
    for (int64_t epoch = 1; epoch <= 4; ++epoch) {
      ReportRecord r;
      r.epoch = epoch;
      r.metrics = {{"val_accuracy", 0.8 + 0.02 * static_cast<double>(epoch)}};
      sent.reports.push_back(r);
    }
    v1::Trial wire;
    ToProto(sent, /*include_reports=*/true, &wire);
    const TrialSummary got = FromProto(wire);
    SCOPED_TRACE(search::ToString(state));
    EXPECT_EQ(got.record.study_id, sent.record.study_id);
    EXPECT_EQ(got.record.number, sent.record.number);
    EXPECT_EQ(got.record.state, sent.record.state);
    EXPECT_EQ(got.record.params, sent.record.params);
    EXPECT_EQ(got.record.end_reason, sent.record.end_reason);
    EXPECT_EQ(got.record.final_metrics, sent.record.final_metrics);
    EXPECT_EQ(got.dollars, sent.dollars);
    EXPECT_EQ(got.seconds, sent.seconds);
    EXPECT_EQ(got.wasted_dollars, sent.wasted_dollars);
    EXPECT_EQ(got.segments, sent.segments);
    EXPECT_EQ(got.interruptions, sent.interruptions);
    EXPECT_EQ(got.objective, sent.objective);
    EXPECT_EQ(got.epochs, sent.epochs);
    EXPECT_EQ(got.checkpoint, sent.checkpoint);
    ASSERT_TRUE(got.evaluation.has_value());
    EXPECT_EQ(got.evaluation->state, e.state);
    EXPECT_EQ(got.evaluation->requested_by, e.requested_by);
    EXPECT_EQ(got.evaluation->metrics, e.metrics);
    EXPECT_EQ(got.evaluation->error, e.error);
    ASSERT_EQ(got.reports.size(), sent.reports.size());
    for (size_t i = 0; i < sent.reports.size(); ++i) {
      EXPECT_EQ(got.reports[i].epoch, sent.reports[i].epoch);
      EXPECT_EQ(got.reports[i].metrics, sent.reports[i].metrics);
    }
  }
}

TEST(ProtoRoundTrip, ATrialWithoutObjectiveEvaluationOrCurveSaysSo) {
  TrialSummary sent;
  sent.reports.push_back({});
  v1::Trial wire;
  ToProto(sent, /*include_reports=*/false, &wire);
  const TrialSummary got = FromProto(wire);
  EXPECT_FALSE(got.objective.has_value());
  EXPECT_FALSE(got.evaluation.has_value());
  EXPECT_TRUE(got.reports.empty());  // not asked for
}

}  // namespace proto_round_trip_test
}  // namespace sift::coordinator

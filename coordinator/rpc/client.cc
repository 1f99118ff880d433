#include "coordinator/rpc/client.h"

#include "common/wire/proto_convert.h"
#include "coordinator/rpc/cost_proto.h"

namespace sift::coordinator {

// The shared conversions (common/wire) beside this file's overloads for summaries.
using common::FromProto;
using common::ToProto;

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
  common::ClientOptions plaintext;
  plaintext.address = address;
  return common::MakeChannel(plaintext);
}

StudySummary FromProto(const v1::Study& s) {
  StudySummary out;
  out.record.id = s.id();
  out.record.name = s.name();
  out.record.state = s.state() == v1::STUDY_RUNNING     ? StudyState::kRunning
                     : s.state() == v1::STUDY_COMPLETED ? StudyState::kCompleted
                     : s.state() == v1::STUDY_FAILED    ? StudyState::kFailed
                     : s.state() == v1::STUDY_PAUSED    ? StudyState::kPaused
                                                        : StudyState::kCancelled;
  out.record.end_reason = s.end_reason();
  out.metric = s.objective_metric();
  out.maximize = s.maximize();
  out.max_trials = s.max_trials();
  out.total = s.trials_total();
  out.finished = s.trials_finished();
  out.running = s.trials_running();
  if (s.has_best()) out.best_trial = s.best_trial_number();
  out.best_value = s.best_objective();
  out.dollars = s.cost_dollars();
  out.idle_dollars = s.idle_dollars();
  out.idle_seconds = s.idle_seconds();
  out.budget.max_trials = s.max_trials();
  out.budget.max_dollars = s.max_dollars();
  out.budget.max_hours = s.max_hours();
  out.wasted_dollars = s.wasted_dollars();
  out.paused_wasted_dollars = s.paused_wasted_dollars();
  out.dollars_by_market = {s.dollars_by_market().begin(), s.dollars_by_market().end()};
  out.preemptions = s.preemptions();
  out.expirations = s.expirations();
  out.checkpoint_dir = s.checkpoint_dir();
  for (const auto& e : s.events()) {
    out.events.push_back({s.id(), e.at(), e.user(), e.action(), e.detail()});
  }
  CostFromProto(s, &out);
  return out;
}

TrialSummary FromProto(const v1::Trial& t) {
  TrialSummary out;
  out.record.study_id = t.study_id();
  out.record.number = t.number();
  const search::TrialState states[] = {
      search::TrialState::kPending, search::TrialState::kPending, search::TrialState::kRunning,
      search::TrialState::kPaused,  search::TrialState::kCompleted, search::TrialState::kStopped,
      search::TrialState::kFailed,  search::TrialState::kDiverged};
  out.record.state = states[std::clamp(static_cast<int>(t.state()), 0, 7)];
  out.record.params = FromProto(t.params());
  out.record.end_reason = t.end_reason();
  out.record.final_metrics = {t.final_metrics().begin(), t.final_metrics().end()};
  out.dollars = t.cost_dollars();
  out.seconds = t.wall_seconds();
  if (t.has_objective()) out.objective = t.objective();
  out.epochs = t.epochs();
  out.checkpoint = t.checkpoint();
  out.wasted_dollars = t.wasted_dollars();
  out.segments = t.leases();
  out.interruptions = t.interruptions();
  if (!t.test_evaluation().empty()) {
    EvaluationRecord e;
    e.study_id = t.study_id();
    e.number = t.number();
    try {
      e.state = EvaluationStateFromString(t.test_evaluation());
    } catch (const std::runtime_error&) {
      e.state = EvaluationState::kFailed;  // a newer coordinator's state: shown, not trusted
    }
    e.metrics = {t.test_metrics().begin(), t.test_metrics().end()};
    e.error = t.test_error();
    e.requested_by = t.test_requested_by();
    out.evaluation = e;
  }
  for (const auto& r : t.reports()) {
    ReportRecord rec;
    rec.epoch = r.epoch();
    rec.metrics = {r.metrics().begin(), r.metrics().end()};
    out.reports.push_back(rec);
    out.epochs = std::max(out.epochs, r.epoch());
  }
  return out;
}

}  // namespace sift::coordinator

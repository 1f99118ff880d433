#include "coordinator/rpc/trial_proto.h"

#include <algorithm>
#include <stdexcept>

#include "common/wire/proto_convert.h"

namespace sift::coordinator {

// The shared conversions (common/wire) beside this file's overloads.
using common::FromProto;
using common::ToProto;

v1::TrialState ToProto(search::TrialState s) {
  switch (s) {
    case search::TrialState::kPending:
      return v1::TRIAL_PENDING;
    case search::TrialState::kRunning:
      return v1::TRIAL_RUNNING;
    case search::TrialState::kPaused:
      return v1::TRIAL_PAUSED;
    case search::TrialState::kCompleted:
      return v1::TRIAL_COMPLETED;
    case search::TrialState::kStopped:
      return v1::TRIAL_STOPPED;
    case search::TrialState::kFailed:
      return v1::TRIAL_FAILED;
    case search::TrialState::kDiverged:
      return v1::TRIAL_DIVERGED;
  }
  return v1::TRIAL_STATE_UNSPECIFIED;
}

void ToProto(const TrialSummary& t, bool include_reports, v1::Trial* out) {
  out->set_study_id(t.record.study_id);
  out->set_number(t.record.number);
  out->set_state(ToProto(t.record.state));
  ToProto(t.record.params, out->mutable_params());
  out->set_end_reason(t.record.end_reason);
  out->set_cost_dollars(t.dollars);
  out->set_wall_seconds(t.seconds);
  out->set_has_objective(t.objective.has_value());
  out->set_objective(t.objective.value_or(0));
  out->set_epochs(t.epochs);
  out->set_checkpoint(t.checkpoint);
  out->set_wasted_dollars(t.wasted_dollars);
  out->set_leases(t.segments);
  out->set_interruptions(t.interruptions);
  for (const auto& [k, v] : t.record.final_metrics) (*out->mutable_final_metrics())[k] = v;
  if (t.evaluation) {
    out->set_test_evaluation(ToString(t.evaluation->state));
    out->set_test_requested_by(t.evaluation->requested_by);
    for (const auto& [k, v] : t.evaluation->metrics) (*out->mutable_test_metrics())[k] = v;
    out->set_test_error(t.evaluation->error);
  }
  if (!include_reports) return;
  for (const auto& r : t.reports) {
    auto* rep = out->add_reports();
    rep->set_epoch(r.epoch);
    for (const auto& [k, v] : r.metrics) (*rep->mutable_metrics())[k] = v;
  }
}

TrialSummary FromProto(const v1::Trial& t) {
  TrialSummary out;
  out.record.study_id = t.study_id();
  out.record.number = t.number();
  const search::TrialState states[] = {
      search::TrialState::kPending, search::TrialState::kPending,   search::TrialState::kRunning,
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

#include "coordinator/rpc/study_proto.h"

#include "coordinator/rpc/cost_proto.h"

namespace sift::coordinator {

void ToProto(const StudySummary& s, v1::Study* out) {
  out->set_id(s.record.id);
  out->set_name(s.record.name);
  out->set_state(s.record.state == StudyState::kRunning     ? v1::STUDY_RUNNING
                 : s.record.state == StudyState::kCompleted ? v1::STUDY_COMPLETED
                 : s.record.state == StudyState::kFailed    ? v1::STUDY_FAILED
                 : s.record.state == StudyState::kPaused    ? v1::STUDY_PAUSED
                                                            : v1::STUDY_CANCELLED);
  out->set_objective_metric(s.metric);
  out->set_maximize(s.maximize);
  out->set_trials_total(s.total);
  out->set_trials_finished(s.finished);
  out->set_trials_running(s.running);
  out->set_has_best(s.best_trial.has_value());
  out->set_best_trial_number(s.best_trial.value_or(0));
  out->set_best_objective(s.best_value);
  out->set_cost_dollars(s.dollars);
  out->set_end_reason(s.record.end_reason);
  out->set_max_trials(s.max_trials);
  out->set_idle_dollars(s.idle_dollars);
  out->set_idle_seconds(s.idle_seconds);
  out->set_max_dollars(s.budget.max_dollars);
  out->set_max_hours(s.budget.max_hours);
  out->set_wasted_dollars(s.wasted_dollars);
  out->set_paused_wasted_dollars(s.paused_wasted_dollars);
  for (const auto& [k, v] : s.dollars_by_market) (*out->mutable_dollars_by_market())[k] = v;
  out->set_preemptions(s.preemptions);
  out->set_expirations(s.expirations);
  out->set_checkpoint_dir(s.checkpoint_dir);
  for (const auto& o : s.objectives) {
    auto* to = out->add_objectives();
    to->set_metric(o.metric);
    to->set_maximize(o.maximize);
  }
  for (const auto& c : s.constraints) {
    auto* to = out->add_constraints();
    to->set_metric(c.metric);
    to->set_bound(c.bound);
    to->set_upper(c.upper);
  }
  out->set_pareto_trials(s.pareto_trials);
  out->set_has_hypervolume(s.hypervolume.has_value());
  out->set_hypervolume(s.hypervolume.value_or(0));
  for (const auto& e : s.events) {
    auto* event = out->add_events();
    event->set_at(e.at);
    event->set_user(e.user);
    event->set_action(e.action);
    event->set_detail(e.detail);
  }
  CostToProto(s, out);
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
  for (const auto& o : s.objectives()) out.objectives.push_back({o.metric(), o.maximize()});
  for (const auto& c : s.constraints())
    out.constraints.push_back({c.metric(), c.bound(), c.upper()});
  out.pareto_trials = s.pareto_trials();
  if (s.has_hypervolume()) out.hypervolume = s.hypervolume();
  for (const auto& e : s.events()) {
    out.events.push_back({s.id(), e.at(), e.user(), e.action(), e.detail()});
  }
  CostFromProto(s, &out);
  return out;
}

}  // namespace sift::coordinator

#include "coordinator/rpc/cost_proto.h"

namespace sift::coordinator {

void CostToProto(const StudySummary& s, v1::Study* out) {
  for (const auto& [k, v] : s.tags) (*out->mutable_tags())[k] = v;
  out->set_has_target(s.target.has_value());
  out->set_target(s.target.value_or(0));
  if (!s.forecast) return;
  const Forecast& f = *s.forecast;
  v1::StudyForecast* p = out->mutable_forecast();
  p->set_at(f.at);
  p->set_spent(f.spent);
  p->set_dollars(f.dollars);
  p->set_finish_at(f.finish_at);
  p->set_trials_ended(f.trials_ended);
  p->set_trials_left(f.trials_left);
  p->set_limited_by(f.limited_by);
  if (!f.target) return;
  const TargetForecast& t = *f.target;
  p->set_has_target(true);
  p->set_target(t.target);
  p->set_target_reached(t.reached);
  p->set_target_estimable(t.estimable);
  p->set_target_chance_per_trial(t.chance_per_trial);
  p->set_target_chance_in_budget(t.chance_in_budget);
  p->set_target_trials_needed(t.trials_needed);
  p->set_target_dollars(t.dollars);
  p->set_target_at(t.at);
}

void CostFromProto(const v1::Study& s, StudySummary* out) {
  out->tags = {s.tags().begin(), s.tags().end()};
  if (s.has_target()) out->target = s.target();
  if (!s.has_forecast()) return;
  const v1::StudyForecast& p = s.forecast();
  Forecast f;
  f.possible = true;
  f.at = p.at();
  f.spent = p.spent();
  f.dollars = p.dollars();
  f.finish_at = p.finish_at();
  f.trials_ended = p.trials_ended();
  f.trials_left = p.trials_left();
  f.limited_by = p.limited_by();
  if (p.has_target()) {
    TargetForecast t;
    t.target = p.target();
    t.reached = p.target_reached();
    t.estimable = p.target_estimable();
    t.chance_per_trial = p.target_chance_per_trial();
    t.chance_in_budget = p.target_chance_in_budget();
    t.trials_needed = p.target_trials_needed();
    t.dollars = p.target_dollars();
    t.at = p.target_at();
    f.target = t;
  }
  out->forecast = f;
}

}  // namespace sift::coordinator

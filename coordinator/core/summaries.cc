#include "coordinator/core/summaries.h"

#include <cmath>

#include "coordinator/core/study_runner.h"
#include "search/multi/hypervolume.h"
#include "search/multi/objective_vectors.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

// The Pareto set and hypervolume of the ended feasible trials (StudySummary's fields).
void AddFrontier(const search::StudyView& view, StudySummary* out) {
  search::Points points;
  for (const auto& p : search::EndedPoints(view)) {
    bool finite = p.feasible();
    for (double v : p.values) finite &= std::isfinite(v);
    if (finite) points.push_back(p.values);
  }
  if (points.empty()) return;
  for (int rank : search::NonDominatedRanks(points)) out->pareto_trials += rank == 0;
  out->hypervolume = search::Hypervolume(points, search::ReferencePoint(points));
}

}  // namespace

StudySummary SummarizeStudy(const StudyRecord& record, const StudyRunner& runner,
                            std::vector<StudyEventRecord> events,
                            const std::vector<SegmentRecord>& segments,
                            const std::vector<IdleSegmentRecord>& idle, double dollars,
                            double now) {
  StudySummary out;
  out.record = record;
  out.record.state = runner.state();
  out.record.end_reason = runner.end_reason();
  const common::StudyConfig& config = runner.config();
  out.metric = config.objective.metric;
  out.maximize = config.objective.maximize;
  out.max_trials = config.budget.max_trials;
  const auto& view = runner.view();
  out.total = static_cast<int64_t>(view.trials.size());
  for (const auto& t : view.trials) {
    ++out.by_state[search::ToString(t.state)];
    out.finished += search::IsTerminal(t.state);
    out.running += t.state == TrialState::kRunning;
    auto v = t.LastValue();
    if (v && t.state != TrialState::kFailed && t.state != TrialState::kDiverged &&
        (!out.best_trial ||
         search::BetterBestTrial(view, t, view.trials[static_cast<size_t>(*out.best_trial)]))) {
      out.best_trial = t.number;
      out.best_value = *v;
    }
  }
  out.objectives = view.objectives;
  out.constraints = view.constraints;
  if (view.objectives.size() > 1) AddFrontier(view, &out);
  out.dollars = dollars;
  out.budget = config.budget;
  out.events = std::move(events);
  out.tags = config.tags;
  out.target = config.target;
  const StudyCost cost = StudyCostOf(segments, idle, now);
  out.wasted_dollars = cost.wasted_dollars;
  out.paused_wasted_dollars = cost.paused_wasted_dollars;
  out.dollars_by_market = cost.dollars_by_market;
  out.preemptions = cost.preemptions;
  out.expirations = cost.expirations;
  out.idle_dollars = cost.idle_dollars;
  out.idle_seconds = cost.idle_seconds;
  return out;
}

std::vector<TrialSummary> SummarizeTrials(const StudyRunner& runner,
                                          const std::vector<TrialRecord>& trials,
                                          const std::vector<ReportRecord>& reports,
                                          const std::vector<SegmentRecord>& segments, double now,
                                          const TrialExtras& extras) {
  // Each trial's curve: for each epoch, the newest report (a retrained epoch replaces it).
  std::map<int64_t, std::map<int64_t, const ReportRecord*>> curves;
  for (const auto& r : reports) curves[r.number][r.epoch] = &r;
  const std::map<int64_t, TrialCost> costs = TrialCosts(segments, now);
  std::vector<TrialSummary> out;
  out.reserve(trials.size());
  for (const auto& t : trials) {
    TrialSummary& s = out.emplace_back();
    s.record = t;
    if (auto c = curves.find(t.number); c != curves.end()) {
      for (const auto& [epoch, r] : c->second) s.reports.push_back(*r);
    }
    if (auto c = costs.find(t.number); c != costs.end()) {
      s.dollars = c->second.dollars;
      s.seconds = c->second.seconds;
      s.wasted_dollars = c->second.wasted_dollars;
      s.segments = c->second.segments;
      s.interruptions = c->second.interruptions;
    }
    const auto& view_trial = runner.view().trials.at(t.number);
    s.objective = view_trial.LastValue();
    s.epochs = view_trial.LastResource();
    if (extras.checkpoint) s.checkpoint = extras.checkpoint(t.number);
    if (extras.evaluation) s.evaluation = extras.evaluation(t.number);
  }
  return out;
}

}  // namespace sift::coordinator

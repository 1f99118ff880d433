#include "search/multi/objective_vectors.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/multi/mo_rungs.h"

namespace sift::search {
namespace {

constexpr double kWorst = -std::numeric_limits<double>::infinity();

// Whether the study's objectives and constraints are `objectives` and `constraints`.
bool SameGoals(const StudyView& study, const std::vector<Objective>& objectives,
               const std::vector<Constraint>& constraints) {
  const auto same_objective = [](const Objective& a, const Objective& b) {
    return a.metric == b.metric && a.maximize == b.maximize;
  };
  const auto same_constraint = [](const Constraint& a, const Constraint& b) {
    return a.metric == b.metric && a.bound == b.bound && a.upper == b.upper;
  };
  return std::equal(objectives.begin(), objectives.end(), study.objectives.begin(),
                    study.objectives.end(), same_objective) &&
         std::equal(constraints.begin(), constraints.end(), study.constraints.begin(),
                    study.constraints.end(), same_constraint);
}

}  // namespace

size_t ObjectiveCount(const StudyView& study) {
  return std::max<size_t>(1, study.objectives.size());
}

const Objective& ObjectiveAt(const StudyView& study, size_t i) {
  return study.objectives.empty() ? study.objective : study.objectives[i];
}

const CurveValues* ObjectiveCurve(const TrialView& trial, size_t i) {
  if (i == 0) return &trial.values;
  return i - 1 < trial.more_values.size() ? &trial.more_values[i - 1] : nullptr;
}

bool EndedPointCursor::Advance(const StudyView& study, std::vector<int64_t>& look) {
  const bool restart = cursor_.Advance(study, look);
  if (!restart && SameGoals(study, objectives_, constraints_)) return false;
  objectives_ = study.objectives;
  constraints_ = study.constraints;
  look.clear();
  for (size_t n = 0; n < study.trials.size(); ++n) look.push_back(static_cast<int64_t>(n));
  return true;
}

std::vector<double> ObjectivesAt(const StudyView& study, const TrialView& trial, int64_t resource) {
  std::vector<double> out(ObjectiveCount(study), kWorst);
  for (size_t i = 0; i < out.size(); ++i) {
    const CurveValues* curve = ObjectiveCurve(trial, i);
    if (curve == nullptr) continue;
    const auto it = curve->find(resource);
    if (it == curve->end() || std::isnan(it->second)) continue;
    out[i] = ObjectiveAt(study, i).maximize ? it->second : -it->second;
  }
  return out;
}

int64_t LastCommonResource(const StudyView& study, const TrialView& trial) {
  // Walk objective 0's curve down from its end: the first resource every other curve has.
  for (auto it = trial.values.rbegin(); it != trial.values.rend(); ++it) {
    bool all = true;
    for (size_t i = 1; all && i < ObjectiveCount(study); ++i) {
      const CurveValues* curve = ObjectiveCurve(trial, i);
      all = curve != nullptr && curve->count(it->first) > 0;
    }
    if (all) return it->first;
  }
  return 0;
}

double ViolationAt(const StudyView& study, const TrialView& trial, int64_t resource) {
  double total = 0;
  for (size_t j = 0; j < study.constraints.size(); ++j) {
    if (j >= trial.constraint_values.size()) continue;
    const CurveValues& curve = trial.constraint_values[j];
    auto it = curve.upper_bound(resource);
    if (it == curve.begin()) continue;  // not reported yet
    total += study.constraints[j].Violation(std::prev(it)->second);
  }
  return total;
}

bool FeasibleAtEnd(const StudyView& study, const TrialView& trial) {
  for (size_t j = 0; j < study.constraints.size(); ++j) {
    if (j >= trial.constraint_values.size() || trial.constraint_values[j].empty()) return false;
    if (!study.constraints[j].Holds(trial.constraint_values[j].rbegin()->second)) return false;
  }
  return true;
}

bool BetterBestTrial(const StudyView& study, const TrialView& a, const TrialView& b) {
  if (!study.constraints.empty()) {
    const bool fa = FeasibleAtEnd(study, a), fb = FeasibleAtEnd(study, b);
    if (fa != fb) return fa;
  }
  const double sa = study.Score(*a.LastValue()), sb = study.Score(*b.LastValue());
  if (sa != sb) return sa > sb;
  return a.number < b.number;
}

TrialPoint PointAt(const StudyView& study, const TrialView& trial, int64_t resource) {
  return {trial.number, ObjectivesAt(study, trial, resource), ViolationAt(study, trial, resource)};
}

bool PointDominates(const TrialPoint& a, const TrialPoint& b) {
  if (a.feasible() && b.feasible()) return Dominates(a.values, b.values);
  return a.violation < b.violation;  // feasible over infeasible: 0 < any violation
}

std::vector<int> ConstrainedRanks(const std::vector<TrialPoint>& points) {
  return NonDominatedRanks(static_cast<int>(points.size()),
                           [&](int i, int j) { return PointDominates(points[i], points[j]); });
}

std::optional<TrialPoint> EndedPoint(const StudyView& study, const TrialView& t) {
  if (t.state == TrialState::kDiverged) {
    TrialPoint p = PointAt(study, t, t.LastResource());
    std::fill(p.values.begin(), p.values.end(), kWorst);
    return p;
  }
  if (t.state != TrialState::kCompleted && t.state != TrialState::kStopped &&
      t.state != TrialState::kPaused) {
    return std::nullopt;
  }
  const int64_t at = LastCommonResource(study, t);
  if (at > 0) return PointAt(study, t, at);
  return std::nullopt;
}

std::vector<TrialPoint> EndedPoints(const StudyView& study) {
  std::vector<TrialPoint> out;
  for (const TrialView& t : study.trials) {
    if (auto p = EndedPoint(study, t)) out.push_back(std::move(*p));
  }
  return out;
}

std::vector<int64_t> ConstrainedTopTrials(const std::vector<TrialPoint>& points, int64_t k) {
  std::vector<RungPoint> feasible;
  std::vector<const TrialPoint*> infeasible;
  for (const TrialPoint& p : points) {
    if (p.feasible()) {
      feasible.push_back({p.trial, p.values});
    } else {
      infeasible.push_back(&p);
    }
  }
  std::vector<int64_t> top = MoTopTrials(feasible, k);
  std::sort(infeasible.begin(), infeasible.end(), [](const TrialPoint* a, const TrialPoint* b) {
    return a->violation < b->violation || (a->violation == b->violation && a->trial < b->trial);
  });
  for (size_t i = 0; static_cast<int64_t>(top.size()) < k && i < infeasible.size(); ++i) {
    top.push_back(infeasible[i]->trial);
  }
  return top;
}

bool ConstrainedInTop(const std::vector<TrialPoint>& points, int64_t trial, int64_t k) {
  const auto self = std::find_if(points.begin(), points.end(),
                                 [&](const TrialPoint& p) { return p.trial == trial; });
  if (self == points.end() || k <= 0) return false;
  // The order ConstrainedTopTrials and MoTopTrials make: feasible with finite values by rank,
  // feasible with a non-finite value by trial number, infeasible by violation.
  Points finite;
  int64_t feasible = 0, ahead = 0;  // ahead: of self within its own group
  int self_index = -1;
  for (const TrialPoint& p : points) {
    if (!p.feasible()) {
      ahead += !self->feasible() && (p.violation < self->violation ||
                                     (p.violation == self->violation && p.trial < trial));
      continue;
    }
    ++feasible;
    if (AllFinite(p.values)) {
      if (p.trial == trial) self_index = static_cast<int>(finite.size());
      finite.push_back(p.values);
    } else {
      ahead += self->feasible() && !AllFinite(self->values) && p.trial < trial;
    }
  }
  if (!self->feasible()) return feasible + ahead < k;
  if (self_index < 0) return static_cast<int64_t>(finite.size()) + ahead < k;
  const std::vector<int> ranks = NonDominatedRanks(finite);
  int64_t before = 0, same = 0;
  for (int r : ranks) {
    before += r < ranks[self_index];
    same += r == ranks[self_index];
  }
  if (before + same <= k) return true;
  if (before >= k) return false;
  const std::vector<int64_t> top = ConstrainedTopTrials(points, k);
  return std::find(top.begin(), top.end(), trial) != top.end();
}

}  // namespace sift::search

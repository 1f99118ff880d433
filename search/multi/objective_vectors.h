// A trial's objectives as one oriented vector (larger is better in each) and its constraint
// violation, read off a StudyView, plus Optuna's constrained order over them: what every
// multi-objective searcher and scheduler ranks trials by. A study with one objective is the
// list of one, so the same code serves it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "search/multi/pareto.h"
#include "search/observations.h"
#include "search/study_view.h"

namespace sift::search {

// The number of objectives (1 for a single-objective view) and the i-th of them.
size_t ObjectiveCount(const StudyView& study);
const Objective& ObjectiveAt(const StudyView& study, size_t i);
// The curve of objective i: `values` for 0, more_values[i - 1] after (null when missing).
const CurveValues* ObjectiveCurve(const TrialView& trial, size_t i);

// The oriented objective vector at `resource`: minimized objectives negated, a value that is
// not a number (or missing at that resource) as -infinity, the worst.
std::vector<double> ObjectivesAt(const StudyView& study, const TrialView& trial, int64_t resource);

// The last resource at which every objective has a value (0 when there is none).
int64_t LastCommonResource(const StudyView& study, const TrialView& trial);

// The total violation of the study's constraints at `resource` (0: feasible): each constraint's
// metric as last reported at or before it. A constraint not yet reported counts as holding, so
// a metric measured only at the end does not stop every trial at the first rung; a value that is
// not finite violates infinitely (Constraint::Violation).
double ViolationAt(const StudyView& study, const TrialView& trial, int64_t resource);

// A trial as the constrained order sees it at one resource.
struct TrialPoint {
  int64_t trial = 0;
  std::vector<double> values;  // oriented
  double violation = 0;        // 0: feasible
  bool feasible() const { return violation == 0; }
  bool operator==(const TrialPoint& o) const {
    return trial == o.trial && values == o.values && violation == o.violation;
  }
};
TrialPoint PointAt(const StudyView& study, const TrialView& trial, int64_t resource);

// Optuna's constrained domination: feasible before infeasible, two infeasible by smaller total
// violation, two feasible by Pareto dominance.
bool PointDominates(const TrialPoint& a, const TrialPoint& b);
std::vector<int> ConstrainedRanks(const std::vector<TrialPoint>& points);

// Whether every constraint held at the trial's last report of its metric. Unlike ViolationAt, a
// constraint never reported breaks: at the end, nothing shows the trial kept to the bound (the
// reports label such a trial infeasible too).
bool FeasibleAtEnd(const StudyView& study, const TrialView& trial);

// The order "best trial" is chosen in, for two trials with a last value: a trial whose constraints
// held (FeasibleAtEnd) before one whose did not, then the better last value of the objective,
// then the lower trial number. Without constraints, the plain order by value.
bool BetterBestTrial(const StudyView& study, const TrialView& a, const TrialView& b);

// What the searchers learn from: COMPLETED, STOPPED and PAUSED trials at their last common
// resource, and DIVERGED ones with every objective -infinity (the worst result), in trial order.
std::vector<TrialPoint> EndedPoints(const StudyView& study);
// One trial's entry of EndedPoints, if it has one.
std::optional<TrialPoint> EndedPoint(const StudyView& study, const TrialView& trial);

// TrialCursor for the searchers that keep ended points (EndedPoint) across asks: which trials an
// ask must look at again, and a start over also when the study's objectives or constraints are
// not those of the last ask, since a point depends on them.
class EndedPointCursor {
 public:
  // Lists in `look` the trials new since the last call and those not terminal then; returns
  // true when the owner must start over (another study, or other goals): `look` then lists
  // every trial.
  bool Advance(const StudyView& study, std::vector<int64_t>& look);

 private:
  TrialCursor cursor_;
  std::vector<Objective> objectives_;
  std::vector<Constraint> constraints_;
};

// The k best trials of `points` in the constrained order: MO-ASHA's top k of the feasible ones
// (whole non-dominated ranks, the cut rank by greedy hypervolume, mo_rungs.h), then the
// infeasible ones by violation, ties to the lower trial number. In order of selection.
std::vector<int64_t> ConstrainedTopTrials(const std::vector<TrialPoint>& points, int64_t k);

// Whether `trial` is among ConstrainedTopTrials(points, k), found from the ranks alone unless it
// lies in the rank that is cut: the hypervolume picks, the costly part, are made only then.
bool ConstrainedInTop(const std::vector<TrialPoint>& points, int64_t trial, int64_t k);

}  // namespace sift::search

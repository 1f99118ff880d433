// Read-only views of a study's history: what every searcher and scheduler decides from.
// The coordinator builds them from its Store, so a restarted coordinator sees the same history.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/curve_values.h"
#include "search/objectives.h"
#include "search/param_value.h"
#include "search/space.h"

namespace sift::search {

// kDiverged: its objective (or, with stop_on_divergence, its training loss) became NaN or
// infinite. It ended on its own account, like kStopped, and counts as the worst result.
enum class TrialState { kPending, kRunning, kPaused, kCompleted, kStopped, kFailed, kDiverged };

inline bool IsTerminal(TrialState s) {
  return s == TrialState::kCompleted || s == TrialState::kStopped || s == TrialState::kFailed ||
         s == TrialState::kDiverged;
}
const char* ToString(TrialState s);

struct TrialView {
  int64_t number = 0;  // 0-based, in order of creation within the study
  Params params;
  TrialState state = TrialState::kPending;
  // Objective value reported at each resource level (epochs completed, starting at 1).
  CurveValues values;
  // With several objectives or constraints (StudyView::objectives, ::constraints): the curve of
  // objectives[i + 1] at more_values[i], and of constraints[j]'s metric at constraint_values[j],
  // each keyed by the same resources as `values`. Empty in a single-objective, unconstrained study.
  std::vector<CurveValues> more_values;
  std::vector<CurveValues> constraint_values;
  double cost_dollars = 0.0;  // measured so far; cost-aware searchers may use it
  double train_seconds = 0.0;
  // Epochs at which an intact checkpoint is kept: population-based training copies only these.
  std::set<int64_t> checkpoints;

  // The last reported value (the trial's result when it ended), if any.
  std::optional<double> LastValue() const {
    if (values.empty()) return std::nullopt;
    return values.rbegin()->second;
  }
  int64_t LastResource() const { return values.empty() ? 0 : values.rbegin()->first; }
};

struct StudyView {
  const SearchSpace* space = nullptr;
  Objective objective;  // objectives[0] when there are several
  // All objectives in order, objective first; empty or of size 1 for a single-objective study.
  std::vector<Objective> objectives;
  std::vector<Constraint> constraints;
  uint64_t seed = 0;
  int64_t max_resource = 1;  // epochs a trial may train at most
  // Indexed by number. A deque: it grows without copying every trial or doubling its slack.
  std::deque<TrialView> trials;

  // Orients a value so that larger is always better.
  double Score(double value) const { return objective.maximize ? value : -value; }
};

}  // namespace sift::search

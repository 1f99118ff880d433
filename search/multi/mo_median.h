// Median stopping with several objectives: Vizier's rule (median_scheduler.h) stops a trial
// whose value at a step is worse than the median of the other trials' values there; here a
// trial stops when the componentwise median of the others' vectors dominates its own. With one
// objective that is exactly MedianScheduler's comparison; with more, a stopped trial is worse
// than at least half the others in every objective, so the rule only stops the clearly behind.
// (The median of the Pareto set alone would stop nearly every trial off the front.)
#pragma once

#include <vector>

#include "search/multi/pareto.h"

namespace sift::search {

// Each objective's median over the points (the mean of the two middle values for an even
// count, as MedianExcluding); empty when there are none.
std::vector<double> MedianPoint(const Points& points);

// Whether the median of `others` (oriented, as `values`), less `grace` in every objective,
// dominates `values`: the trial is behind by more than the grace everywhere it is behind.
// False when there are no others.
bool DominatedByMedian(const std::vector<double>& values, const Points& others, double grace = 0);

}  // namespace sift::search

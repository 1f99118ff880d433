// Pareto dominance and NSGA-II's orderings (Deb et al. 2002) as pure functions. Every vector here
// is oriented so that larger is better in each objective: orient raw values once with Oriented()
// and the rest of the multi-objective code never asks which way an objective points.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace sift::search {

enum class Direction { kMaximize, kMinimize };

// One point per trial, one value per objective, all of the same length.
using Points = std::vector<std::vector<double>>;

// The values with minimized objectives negated, so larger is better everywhere. A value that is
// not a number becomes -infinity: the worst, as RungRecord ranks it.
std::vector<double> Oriented(const std::vector<double>& values,
                             const std::vector<Direction>& directions);

// Whether every value is finite (a point that can be ranked by its values).
inline bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Whether a is at least as good as b in every objective and better in one.
bool Dominates(const std::vector<double>& a, const std::vector<double>& b);

// Non-domination rank of each of n items under a strict partial order `dominates(i, j)`: 0 for
// those nobody dominates, 1 for those dominated only by rank 0, ... (fast non-dominated sort,
// O(n^2) comparisons: fine for the hundreds of trials at a rung).
std::vector<int> NonDominatedRanks(int n, const std::function<bool(int, int)>& dominates);
std::vector<int> NonDominatedRanks(const Points& points);

// The indices of each rank, rank 0 first, ascending inside a rank.
std::vector<std::vector<int>> Fronts(const std::vector<int>& ranks);

// NSGA-II's crowding distance of the points `front` names (one front), in the order of `front`:
// the sum over objectives of the gap between a point's two neighbours, divided by the objective's
// range; the two ends of each objective get +infinity. Objectives with no range add nothing.
// Equal values are ordered by index, so the result does not depend on the sort's whims.
std::vector<double> CrowdingDistance(const Points& points, const std::vector<int>& front);

}  // namespace sift::search

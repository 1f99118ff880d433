// Exact hypervolume (the volume a set of points dominates above a reference point) and each
// point's exclusive contribution to it, for the handful of objectives a study has. Points are
// oriented so larger is better (see pareto.h); the reference is below them in every objective,
// and a point that is not strictly above it in every objective adds nothing, nor does one with
// a value that is not finite (an infinite box would make every difference NaN).
//
// Two objectives: sort and sweep, O(n log n). More: WFG (While, Bradstreet and Barone 2012), the
// volume as a sum of exclusive slices, each an inclusive box less the volume of a "limit set"
// that is itself reduced to its non-dominated points, recursing down to the two-objective sweep.
// Exponential in the number of objectives in the worst case, but a few hundred points in 3 or 4
// objectives take milliseconds.
#pragma once

#include <vector>

#include "search/multi/pareto.h"

namespace sift::search {

double Hypervolume(const Points& points, const std::vector<double>& reference);

// For each point, the volume that only it dominates: Hypervolume(all) - Hypervolume(all but it).
// Zero for a dominated point and for each of two equal points.
std::vector<double> HypervolumeContributions(const Points& points,
                                             const std::vector<double>& reference);

// The volume `point` would add to `set` (its contribution were it added): the inclusive box of
// the point less the volume of the set clipped to that box.
double HypervolumeGain(const std::vector<double>& point, const Points& set,
                       const std::vector<double>& reference);

// A reference point just below the observed points, as BoTorch's infer_reference_point picks
// one: the nadir (the worst value of each objective among the points) less `margin` times the
// objective's range (its |nadir| where the range is 0, and 1 where that is 0 too), so every
// point, the extremes included, lies strictly above it and has a volume of its own. Pass the
// Pareto set for BoTorch's exact choice. Non-finite values are ignored; empty if no point.
std::vector<double> ReferencePoint(const Points& points, double margin = 0.1);

}  // namespace sift::search

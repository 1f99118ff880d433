// ParEGO's scalarization (Knowles, IEEE TEC 2006): several objectives become one number per trial
// under a weight vector drawn afresh at each ask, so that over many asks the single-objective
// model is pointed at every part of the Pareto front. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <vector>

#include "search/multi/objective_vectors.h"

namespace sift::search {

// Knowles' augmentation: the weighted sum's share, which breaks the Chebyshev maximum's ties
// (weakly dominated points score below the points dominating them).
constexpr double kParegoRho = 0.05;

// `objectives` weights, each >= 0 and summing to 1, uniform on the simplex (normalized
// exponentials); a function of (seed, draw) alone, so a restarted coordinator draws the same.
std::vector<double> ParegoWeights(uint64_t seed, uint64_t draw, size_t objectives);

// Each point's augmented Chebyshev scalar, larger is better, in the order of `points`. The
// feasible points' oriented objectives are normalized to [0, 1] over their own range (1 the best
// seen; -infinity, a diverged trial, 0; an objective with no range 1), and with l_i = 1 - value_i,
// scalar = -(max_i w_i l_i + rho sum_i w_i l_i), in [-(1 + rho), 0]. Infeasible points
// (violation > 0) rank behind every feasible one, by violation: below the worst feasible scalar
// (0 if none) by 0.5 (r + 1) / R, r the rank of their violation among the R distinct ones.
std::vector<double> ParegoScalars(const std::vector<TrialPoint>& points,
                                  const std::vector<double>& weights, double rho = kParegoRho);

}  // namespace sift::search

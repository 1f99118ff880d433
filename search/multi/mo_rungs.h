// MO-ASHA's rule at a rung (Schmucker et al. 2021, "Multi-objective Asynchronous Successive
// Halving"): with several objectives there is no k-th best score, so the top k of a rung are the
// best non-dominated ranks taken whole, and the rank that does not fit whole is cut by a
// tie-break. Pure functions of the objective vectors recorded at the rung; the schedulers decide
// when to ask.
//
// Tie-break: greedy hypervolume subset selection inside the cut rank (Optuna's MO-TPE splits its
// last front the same way): pick the point whose box adds the most volume, then the one adding
// the most to those picked, and so on. Chosen over NSGA-II's crowding distance because crowding
// gives both ends of every objective an infinite distance (with k small, the picks are the
// extremes, however poor the trade-off they make) and is known to stop reflecting spread from
// three objectives on, while hypervolume is Pareto-compliant and greedy selection is within
// 1 - 1/e of the best subset's volume. Gains only shrink as picks are added (hypervolume is
// submodular), so the greedy step re-evaluates lazily: a few gains per pick in practice.
#pragma once

#include <cstdint>
#include <vector>

#include "search/multi/pareto.h"

namespace sift::search {

struct RungPoint {
  int64_t trial;               // distinct at a rung; breaks exact ties, lower first
  std::vector<double> values;  // oriented: larger is better (Oriented in pareto.h)
};

// The k trials MO-ASHA puts on top of the rung (all of them if k >= n): whole ranks, then the
// greedy picks from the rank that does not fit. In order of selection: the whole ranks by trial
// number, then the picks as picked. A trial with a value that is not finite ranks after every
// other, by trial number. The volume is measured from ReferencePoint() of the rung's finite
// points. The same set for the same points in any order.
std::vector<int64_t> MoTopTrials(const std::vector<RungPoint>& points, int64_t k);

// Whether `trial` is among MoTopTrials(points, k).
bool MoInTop(const std::vector<RungPoint>& points, int64_t trial, int64_t k);

// Greedy hypervolume subset selection of `want` of `front` (indices into `values`, parallel to
// `trials`) from `ref`, as MoTopTrials cuts a rank; ties go to the lower trial number. In order
// of selection; the same picks whatever the order of `front`.
std::vector<int> GreedyPicks(const Points& values, const std::vector<int64_t>& trials,
                             const std::vector<int>& front, size_t want,
                             const std::vector<double>& ref);

// What ASHA's single-objective rules ask at a rung (rungs.h), with MO-ASHA's order: the trials
// to promote, the top floor(n / eta); and whether a trial survives the stopping rule, being in
// the top floor(n / eta) but at least one. An eta below 1 promotes none and stops none.
std::vector<int64_t> MoPromotable(const std::vector<RungPoint>& points, int64_t eta);
bool MoSurvives(const std::vector<RungPoint>& points, int64_t trial, int64_t eta);

}  // namespace sift::search

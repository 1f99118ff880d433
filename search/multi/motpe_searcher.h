// Multi-objective TPE (Ozaki et al., GECCO 2020 / JAIR 2022, as Optuna's MOTPE): TpeSearcher
// with the good set chosen by the constrained order instead of one score. The best gamma(n)
// trials are whole non-dominated ranks of the feasible trials, the rank that does not fit cut by
// greedy hypervolume contribution (Optuna's hypervolume subset selection), then infeasible ones
// by violation (ConstrainedTopTrials, objective_vectors.h); in l(x) each weighs its hypervolume
// contribution among them over the largest, as Optuna's (measured: bench/search/README.md).
// Everything else (the Parzen estimators, multivariate groups, candidates, constant liar for
// running trials) is TPE's. The bad set past max_above keeps its most recent trials.
#pragma once

#include <vector>

#include "search/multi/objective_vectors.h"
#include "search/tpe/tpe_searcher.h"

namespace sift::search {

class MoTpeSearcher : public TpeSearcher {
 public:
  explicit MoTpeSearcher(TpeOptions options) : TpeSearcher(options) {}
  // Earlier studies' results are one score each; which of several objectives they would rank
  // by is undefined, so a multi-objective study takes none.
  bool SetPriors(Priors) override { return false; }

 protected:
  size_t Observe(const StudyView& study) override;
  Split SplitTrials(const StudyView& study) override;

 private:
  std::vector<double> BelowWeights(const std::vector<int64_t>& below) const;
  std::vector<TrialPoint> points_;  // EndedPoints of the view Observe saw
};

}  // namespace sift::search

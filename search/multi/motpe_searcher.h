// Multi-objective TPE (Ozaki et al., GECCO 2020 / JAIR 2022, as Optuna's MOTPE): TpeSearcher
// with the good set chosen by the constrained order instead of one score. The best gamma(n)
// trials are whole non-dominated ranks of the feasible trials, the rank that does not fit cut by
// greedy hypervolume contribution (Optuna's hypervolume subset selection), then infeasible ones
// by violation (ConstrainedTopTrials, objective_vectors.h); in l(x) each weighs its hypervolume
// contribution among them over the largest, as Optuna's (measured: bench/search/README.md).
// Everything else (the Parzen estimators, multivariate groups, candidates, constant liar for
// running trials) is TPE's. The bad set past max_above keeps its most recent trials.
//
// Cost per ask: the ended trials and the ranks of the best of them are kept across asks
// (RankedPoints), the good set's weights while it does not change, and the bad set is read from
// the newest trials back; so an ask after 10,000 trials costs about what one after 1,000 does
// (bench/search/README.md). The same proposals as ranking the whole history at every ask.
#pragma once

#include <vector>

#include "search/multi/ranked_points.h"
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
  std::vector<double> BelowWeights(const std::vector<int64_t>& below);
  RankedPoints points_;  // the ended points of the view Observe saw
  // The last good set's values and weights: at 10,000 trials the good set rarely changes.
  Points below_values_;
  std::vector<double> below_weights_;
};

}  // namespace sift::search

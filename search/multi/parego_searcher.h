// ParEGO (Knowles, IEEE TEC 2006) on Sift's GP-BO: `gp` with several objectives. At each ask a
// weight vector is drawn on the simplex from the study seed and the number of trials so far (a
// restarted coordinator draws the same), every ended trial (EndedPoints) becomes one augmented
// Chebyshev scalar under it (parego.h: normalized over the feasible trials' range, infeasible
// trials below every feasible one by violation), and GpSearcher maximizes log-EI on that scalar,
// with running and pending trials as kriging believers and the same candidate search.
//
// The scalars change at every ask, so they are handed to the GP as that ask's scores; what the
// GP keeps across asks depends only on parameters (features, the Cholesky rows) or is keyed by
// the scores it was computed from (the hyperparameters). To keep refits as rare as the
// single-objective GP's, the refit set is scalarized on its own: normalized over itself, under
// weights drawn from the refit point (GpRefitPoint), so its scores change only when it does.
// Past max_points the model takes the best half by this ask's scalar and the most recent others.
#pragma once

#include <vector>

#include "search/bo/gp_searcher.h"
#include "search/multi/objective_vectors.h"

namespace sift::search {

class ParegoSearcher : public GpSearcher {
 public:
  using GpSearcher::GpSearcher;
  // Earlier studies' results are one score each, not a vector: a multi-objective study takes none.
  bool SetPriors(Priors) override { return false; }

 protected:
  size_t Observe(const StudyView& study) override;
  Rows SelectRows(const StudyView& study) override;

 private:
  // EndedPoints of the view Observe saw, in trial order, kept across asks: only new trials and
  // those not terminal at the last ask are looked at again (a terminal trial never changes).
  std::vector<TrialPoint> points_;
  EndedPointCursor cursor_;
  std::vector<int64_t> look_;
};

}  // namespace sift::search

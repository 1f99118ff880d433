// Searcher: proposes configurations. Pure: the answer depends only on the view and the seed.
#pragma once

#include <vector>

#include "search/param_value.h"
#include "search/priors.h"
#include "search/study_view.h"

namespace sift::search {

class Searcher {
 public:
  virtual ~Searcher() = default;

  // Proposes up to `count` new configurations, to become trials numbered trials.size(),
  // trials.size() + 1, ... Trials still running are in the view so that suggestions made for
  // parallel workers differ. Fewer than `count` (possibly none) means the space is exhausted.
  // Must not change what a later call returns for the same view (no hidden state that matters);
  // caches that only save work are fine.
  virtual std::vector<Params> Suggest(const StudyView& study, int count) = 0;

  // Observations from earlier studies to learn from (warm_start:), set once before the first
  // Suggest. Returns false when this searcher does not use them (it then ignores them).
  virtual bool SetPriors(Priors priors) {
    (void)priors;
    return false;
  }
};

}  // namespace sift::search

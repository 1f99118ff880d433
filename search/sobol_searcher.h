// Quasi-random search: trial n takes point n of a scrambled Sobol sequence seeded by the study, one
// dimension per parameter (inactive ones are dropped). Covers the space more evenly than random
// search for the same number of trials, and depends only on (seed, n), so it survives restarts.
#pragma once

#include "search/searcher.h"

namespace sift::search {

class SobolSearcher : public Searcher {
 public:
  std::vector<Params> Suggest(const StudyView& study, int count) override;

  // The configuration trial `number` gets; also the startup design of the model-based searchers.
  static Params PointFor(const StudyView& study, uint64_t number);
};

}  // namespace sift::search

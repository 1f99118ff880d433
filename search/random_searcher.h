// Uniform random search. Trial n's configuration depends only on (seed, n), so it survives
// restarts and reorderings of history.
#pragma once

#include "search/searcher.h"

namespace sift::search {

class RandomSearcher : public Searcher {
 public:
  std::vector<Params> Suggest(const StudyView& study, int count) override;
};

}  // namespace sift::search

#include "search/random_searcher.h"

namespace sift::search {

std::vector<Params> RandomSearcher::Suggest(const StudyView& study, int count) {
  std::vector<Params> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + i;
    Rng rng(DeriveSeed(study.seed, {number, /*stream=*/0x52414e44}));
    out.push_back(study.space->Sample(rng));
  }
  return out;
}

}  // namespace sift::search

// Configurations tried first (Optuna's enqueue_trial): trial n < enqueued.size() runs
// enqueued[n], completed by a seeded draw for the parameters it leaves out; later trials come
// from the wrapped searcher, which sees the enqueued trials in its history like any other.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "search/searcher.h"

namespace sift::search {

class EnqueuedSearcher : public Searcher {
 public:
  EnqueuedSearcher(std::vector<Params> enqueued, std::unique_ptr<Searcher> inner);

  std::vector<Params> Suggest(const StudyView& study, int count) override;
  bool SetPriors(Priors priors) override { return inner_->SetPriors(std::move(priors)); }

  // Trial `number`'s enqueued configuration made whole: deterministic for (seed, number).
  static Params Completed(const SearchSpace& space, const Params& partial, uint64_t seed,
                          int64_t number);

 private:
  std::vector<Params> enqueued_;
  std::unique_ptr<Searcher> inner_;
};

// "" when `partial` can be completed into a valid configuration of `space`, else the problem
// ("lr: 5 is outside [0.001, 0.1]", "momentum: set but inactive under its condition").
std::string CheckEnqueued(const SearchSpace& space, const Params& partial);

}  // namespace sift::search

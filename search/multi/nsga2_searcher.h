// NSGA-II as a searcher (Deb et al. 2002, on nsga2.h's steps), in the elitist, generational form
// Optuna's NSGAIISampler uses, derived from the view alone. Trial n belongs to generation
// n / population. Generation 0 is random. The parents of generation g are the `population`
// survivors (constrained non-dominated rank, then crowding) of generation g - 1's parents and
// generation g - 1's results (EndedPoints, objective_vectors.h), recomputed from the view at
// each ask, so a late result joins as soon as it is in. A child is two tournament winners
// crossed and mutated in the unit cube, seeded by its trial number: parallel asks differ, and a
// rebuilt searcher asked the same view answers the same. With one objective it is a plain
// elitist genetic algorithm.
#pragma once

#include <cstdint>
#include <vector>

#include "search/multi/nsga2.h"
#include "search/multi/objective_vectors.h"
#include "search/searcher.h"

namespace sift::search {

struct Nsga2Options {
  int64_t population = 50;
  Nsga2Variation variation;
};

class Nsga2Searcher : public Searcher {
 public:
  explicit Nsga2Searcher(Nsga2Options options) : options_(options) {}
  std::vector<Params> Suggest(const StudyView& study, int count) override;

  // The parents of generation `generation` (trial numbers, in survival order).
  std::vector<int64_t> Parents(const StudyView& study, int64_t generation) const;

 private:
  std::vector<TrialPoint> ParentPoints(const StudyView& study, int64_t generation) const;
  Params Child(const StudyView& study, const std::vector<TrialPoint>& parents,
               uint64_t number) const;
  Nsga2Options options_;
};

}  // namespace sift::search

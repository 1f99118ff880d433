// NSGA-II as a searcher (Deb et al. 2002, on nsga2.h's steps), in the elitist, generational form
// Optuna's NSGAIISampler uses, derived from the view alone. Trial n belongs to generation
// n / population. Generation 0 is random. The parents of generation g are the `population`
// survivors (constrained non-dominated rank, then crowding) of generation g - 1's parents and
// generation g - 1's results (EndedPoints, objective_vectors.h), as the view shows them at each
// ask, so a late result joins as soon as it is in. A child is two tournament winners crossed and
// mutated in the unit cube, seeded by its trial number: parallel asks differ, and a rebuilt
// searcher asked the same view answers the same. With one objective it is a plain elitist
// genetic algorithm.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "search/multi/nsga2.h"
#include "search/multi/objective_vectors.h"
#include "search/searcher.h"

namespace sift::search {

struct Nsga2Options {
  int64_t population = 50;
  Nsga2Variation variation;
};

// The survivors of each generation kept across asks, so that an ask costs what changed since the
// last one rather than a replay of every generation from the first. Only a cache: Get(g)
// answers what replaying generations 0 to g - 1 over EndedPoints(study) would. Sync looks only at
// trials new since the last call and at those not terminal then (EndedPointCursor); a trial whose
// ended point appears, changes or goes (a late result, a pause and resume) makes the next
// generation's parents stale, and they are selected again at the next Get, then the following
// generation's as long as they come out different. Starts over when the view is another study's.
class Nsga2Generations {
 public:
  struct Parents {
    std::vector<TrialPoint> points;  // in survival order
    std::vector<int> ranks;          // constrained non-dominated ranks among them
    std::vector<double> crowding;    // within each one's rank
  };

  explicit Nsga2Generations(int64_t population) : population_(population) {}
  void Sync(const StudyView& study);
  // The parents of generation `generation` for the view of the last Sync (none for 0). Valid until
  // the next Sync or Get.
  const Parents& Get(int64_t generation);

 private:
  // Selects generation h + 1's parents again; whether they changed.
  bool Step(size_t h);

  int64_t population_;
  EndedPointCursor cursor_;
  std::vector<int64_t> look_;
  std::vector<std::optional<TrialPoint>> ended_;  // by trial number
  // parents_[g]: generation g's, selected for g below valid_; those of g = h + 1 for h in stale_
  // are not the view's (generation h's results or parents changed since).
  std::vector<Parents> parents_;
  size_t valid_ = 0;
  std::set<size_t> stale_;
};

class Nsga2Searcher : public Searcher {
 public:
  explicit Nsga2Searcher(Nsga2Options options)
      : options_(options), generations_(options.population) {}
  std::vector<Params> Suggest(const StudyView& study, int count) override;

  // The parents of generation `generation` (trial numbers, in survival order), from the view alone.
  std::vector<int64_t> Parents(const StudyView& study, int64_t generation) const;

 private:
  Params Child(const StudyView& study, const Nsga2Generations::Parents& parents,
               uint64_t number) const;
  Nsga2Options options_;
  Nsga2Generations generations_;
};

}  // namespace sift::search

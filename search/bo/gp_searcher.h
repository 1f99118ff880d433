// GP-BO (Snoek et al., NeurIPS 2012): a Matern-5/2 ARD Gaussian process on the unit cube (log
// parameters already log-mapped, categoricals one-hot, integers rounded before the model sees a
// candidate), log-EI (Ament et al. 2023) maximised over Sobol candidates plus perturbations of the
// best trials, then refined by a small pattern search. Pending and running trials enter as kriging
// believers (their believed value is the posterior mean: the mean is unchanged, the variance around
// them collapses), so parallel workers get different suggestions.
//
// Cost: hyperparameters are refitted only at fixed observation counts (every one up to 25, every
// 5th to 100, every 25th to 500, every 100th beyond) on at most the 200 most recent observations,
// so refits are rare and each is bounded. The GP conditions on at most max_points observations
// (the best half by score, then the most recent others, in trial order), so an ask costs the same
// at 10,000 trials as at 100; the Cholesky factor keeps the rows before the first one that changed
// (a new trial usually replaces the oldest recent one: about half the rows are refactored).
// The candidate count shrinks as n grows, and exact variances (O(n^2) each) are computed only for
// candidates whose EI upper bound (variance conditioned on the nearest point alone, which can only
// be larger) beats the best exact value found so far: the argmax is exact over the candidate set.
//
// Observations: COMPLETED, STOPPED and PAUSED trials with their last value (see observations.h);
// inactive conditional parameters are encoded at the centre of their range (one-hots all zero).
// With cost_aware, a second GP models log(cost_dollars) and the acquisition is log-EI minus the
// predicted log cost: expected improvement per expected dollar (Snoek et al. 2012, Sec. 3.2).
//
// Warm start (SetPriors): earlier studies' trials (the best max_points of them) are rows before
// this study's own, each with the model's noise variance divided by Priors::weight (a weighted
// likelihood: a prior point counts for `weight` of one of this study's), so the posterior leans
// on them where this study has no data and on its own trials where it has; they join the
// hyperparameter fit and the neighbourhoods searched around the best points. A parameter a prior
// lacks sits at the centre of its range, as an inactive one does. The Sobol start ends once this
// study's observations plus PriorTrialEquivalent reach n_startup.
//
// What the model learns from is chosen by Observe and SelectRows: the objective's score here,
// one scalar per trial under a weight vector drawn per ask in ParEGO (multi/parego_searcher.h).
#pragma once

#include <algorithm>
#include <memory>

#include "search/bo/gaussian_process.h"
#include "search/observations.h"
#include "search/searcher.h"

namespace sift::search {

struct GpOptions {
  int64_t n_startup = 0;  // 0: max(5, params + 1) Sobol trials first
  bool cost_aware = false;
  int64_t max_candidates = 1024;  // Sobol candidates at small n (fewer as n grows)
  int64_t fit_window = 200;       // observations used to refit hyperparameters
  // The GP conditions on at most this many observations (0: all): the best half by score and the
  // most recent of the others. Keeps an ask's cost flat in the number of trials (exact GP is
  // O(n^2) per ask and O(n^3) to rebuild); see bench/search/README.md for why it is safe.
  int64_t max_points = 100;
};

// Whether the hyperparameters are refitted when the n-th observation arrives, and the last refit
// point at or before n.
bool GpRefitsAt(int64_t n);
int64_t GpRefitPoint(int64_t n);

// The model's rows past max_points: `best` (trial numbers, sorted) then the most recent others
// walking [newest, oldest) backwards through the observations in trial order, up to `cap` in all,
// merged into trial order.
template <class NewestFirst>
std::vector<int64_t> BestAndRecent(std::vector<int64_t> best, NewestFirst newest,
                                   NewestFirst oldest, size_t cap) {
  const size_t n_best = best.size();
  for (; newest != oldest && best.size() < cap; ++newest) {
    if (!std::binary_search(best.begin(), best.begin() + n_best, *newest)) best.push_back(*newest);
  }
  std::reverse(best.begin() + n_best, best.end());
  std::inplace_merge(best.begin(), best.begin() + n_best, best.end());
  return best;
}

class GpSearcher : public Searcher {
 public:
  GpSearcher(const SearchSpace& space, GpOptions options);
  ~GpSearcher() override;
  std::vector<Params> Suggest(const StudyView& study, int count) override;
  bool SetPriors(Priors priors) override;

 protected:
  // What one ask conditions on, scores oriented (larger is better): the model's rows and the
  // hyperparameter refit set, each in trial order. The refit happens only when the refit set or
  // its scores change, so they should stay put between refit points (GpRefitPoint).
  struct Rows {
    std::vector<int64_t> numbers;
    std::vector<double> scores;
    std::vector<int64_t> fit_numbers;
    std::vector<double> fit_scores;
  };
  // How many observations the study has (the Sobol start runs until n_startup), then the rows
  // once the start is over; each called at most once per ask, in that order.
  virtual size_t Observe(const StudyView& study);
  virtual Rows SelectRows(const StudyView& study);
  const GpOptions& options() const { return options_; }

 private:
  struct Model;  // one GP with its hyperparameter cache (objective, or log cost)
  // Encoded features of trial `number`, computed once per trial (parameters never change); starts
  // over when the space or seed differs or the history shrinks.
  const double* Features(const StudyView& study, int64_t number);
  // The priors' parameters this space can take, and their features; computed per space.
  void SyncPriors(const SearchSpace& space);
  GpOptions options_;
  Priors priors_;
  const SearchSpace* prior_space_ = nullptr;
  std::vector<Params> prior_params_;
  std::vector<double> prior_x_;
  std::vector<size_t> prior_used_;  // the priors the model takes, best first
  size_t features_;
  std::unique_ptr<Model> objective_, cost_;
  ObservationIndex index_;  // the observations, updated per ask
  const SearchSpace* cached_space_ = nullptr;
  uint64_t cached_seed_ = 0;
  std::vector<double> cached_x_;
  std::vector<char> cached_;
};

}  // namespace sift::search

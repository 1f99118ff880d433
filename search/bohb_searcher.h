// BOHB's model-based sampler (Falkner et al., ICML 2018), meant to feed the hyperband scheduler.
// A fraction of trials (random_fraction) is drawn at random. The others come from a pair of
// multivariate KDEs, good and bad, fitted on the largest resource level (epoch) at which at least
// min_points trials have reported: bandwidths by the normal reference rule (1.06 sd n^(-1/(4+d)),
// at least min_bandwidth; Aitchison-Aitken for categoricals), num_samples candidates drawn from the
// good KDE widened by bandwidth_factor, the one maximising l(x)/g(x) kept. Inactive conditional
// parameters are imputed at the centre of their range for the model and dropped from suggestions.
// Cost per ask, flat in the number of trials: the levels are kept across asks (LevelIndex) and the
// KDEs are fitted on at most max_good + max_bad trials (see BohbOptions).
#pragma once

#include "search/observations.h"
#include "search/searcher.h"
#include "search/tpe/parzen_estimator.h"

namespace sift::search {

struct BohbOptions {
  int64_t min_points = 0;  // 0: number of parameters + 2
  double random_fraction = 1.0 / 3.0;
  double top_n_percent = 15.0;
  int64_t num_samples = 64;
  double bandwidth_factor = 3.0;
  double min_bandwidth = 1e-3;
  // Bounds on the trials the KDEs are fitted on (0: none): the good KDE on at most max_good of the
  // best (the top top_n_percent, as TPE's gamma_max bounds its good set; the others then count
  // as bad), the bad one on the max_bad most recent of the rest. They keep an ask's cost flat in
  // the number of trials; see bench/search/README.md for why they are safe.
  int64_t max_good = 25;
  int64_t max_bad = 100;
};

class BohbSearcher : public Searcher {
 public:
  explicit BohbSearcher(BohbOptions options) : options_(options) {}
  std::vector<Params> Suggest(const StudyView& study, int count) override;

  // The resource level the model is fitted on, or 0 when no level has enough reports.
  int64_t ModelLevel(const StudyView& study);
  // The trials of the good and the bad KDE at that level, best first (before the check that
  // there are enough bad ones). For tests and diagnostics.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> ModelTrials(const StudyView& study);

 private:
  std::pair<std::vector<LevelIndex::Entry>, std::vector<LevelIndex::Entry>> ModelSets(
      int64_t level) const;
  // Fits the KDEs on `good` and `bad` (rows of unit values / category indices) into good_ and
  // bad_kde_: the good ones only when the good trials (`good_numbers`, in order) or the unit cache
  // changed since the last fit.
  void FitModels(const std::vector<int>& choices, const std::vector<int64_t>& good_numbers);

  BohbOptions options_;
  UnitCache units_;
  LevelIndex levels_;  // every level's values, updated per ask
  // The good KDE and its widened copy (candidates are drawn from it), kept across asks: at a
  // level with many trials the best max_good rarely change, while the bad set moves every ask.
  struct GoodModel {
    std::vector<int64_t> numbers;  // the good trials, best first
    uint64_t generation = 0;       // units_.generation() then (0: never fitted)
    ParzenEstimator l, wide;
  };
  GoodModel good_;
  ParzenEstimator bad_kde_;  // refitted at every ask into the same arrays
  // Per-ask working arrays, kept to spare allocations.
  std::vector<double> good_rows_, bad_rows_, mu_, sigma_, x_, best_;
  std::vector<std::vector<double>> probs_;
};

}  // namespace sift::search

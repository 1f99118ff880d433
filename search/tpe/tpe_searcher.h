// Tree-structured Parzen Estimator (Bergstra et al., NeurIPS 2011) with Optuna 3.1's refinements:
// gamma(n) = min(ceil(0.1 n), 25) good trials, a prior component, the magic clip, recency weights,
// 24 candidates drawn from l(x) and the one maximising l(x)/g(x) kept. By default (Optuna 5.0's
// switches) multivariate, with group and constant liar: the unconditional parameters are one
// joint estimator pair, each set of parameters under the same condition another (fitted on the
// trials where they are active), and running trials count as bad ones. The joint kernels'
// bandwidths follow Scott's rule on the observations' spread (TpeSearcherKernel); with
// `multivariate` off, one estimator pair per parameter, as Optuna 3.1's default.
//
// Warm start (SetPriors): each earlier study's trials are split into good and bad by the same
// gamma, within that study (its scores need not be on this study's scale, only its ranking is
// used; Watanabe et al. 2022 split per task likewise), and join l and g as components of weight
// Priors::weight, beside this study's own (weight up to 1). In a joint group, a prior that lacks
// one of the group's parameters (or has it inactive) is left out of that group only, as this
// study's own inactive trials are; the random start ends once this study's observations plus
// PriorTrialEquivalent reach n_startup.
//
// Cost per ask, flat in the number of trials: the observations and their ranking are kept across
// asks (ObservationIndex), the good set is at most gamma_max trials, and g(x) is fitted on at most
// max_above bad trials. That bound is the one approximation: past it, g keeps the most recent half
// with Optuna's weights and an evenly spaced sample of the older trials, each weighted by Optuna's
// weight at its position times the number of trials it stands for (a stratified estimate of
// Optuna's sum over every old trial).
#pragma once

#include "search/observations.h"
#include "search/searcher.h"
#include "search/tpe/parzen_estimator.h"

namespace sift::search {

// TpeSearcher's kernel: multivariate, Scott's rule on the observations' spread, prior weight 2
// and the magic clip's floor at 0.7 of Optuna's (bench/search/README.md, issue 26: measured
// against Optuna 3.1's TPE variants on Branin, Hartmann-6 and a mixed space). A heavier prior
// keeps exploring while the data-driven kernels narrow.
TpeKernelOptions TpeSearcherKernel();

struct TpeOptions {
  int64_t n_startup = 10;  // random trials before the model is used
  int64_t n_ei_candidates = 24;
  double gamma = 0.1;         // fraction of trials taken as good...
  int64_t gamma_max = 25;     // ...at most this many
  bool constant_liar = true;  // count running trials as bad ones, to spread parallel workers
  // With the kernel multivariate: also model jointly each set of conditional parameters that
  // share a condition (Optuna's `group`); without, conditional parameters are univariate.
  bool group = true;
  // g(x), the model of the bad trials, is fitted on at most this many of them (0: all, as Optuna):
  // past that, the most recent half and an evenly spaced sample of the older ones, weighted to
  // stand for those they skip. Bounds the cost of an ask: see bench/search/README.md.
  int64_t max_above = 100;
  TpeKernelOptions kernel = TpeSearcherKernel();
};

// The parameters a multivariate TPE models jointly, as indices into the space, in order of each
// group's first parameter: the unconditional ones, then (with `group`) each set of parameters
// with the same condition (parent and values), which are active in exactly the same trials.
std::vector<std::vector<size_t>> TpeGroups(const SearchSpace& space, bool group);

class TpeSearcher : public Searcher {
 public:
  explicit TpeSearcher(TpeOptions options) : options_(options) {}
  std::vector<Params> Suggest(const StudyView& study, int count) override;
  bool SetPriors(Priors priors) override;

  // The bad trials g(x) is fitted on, in trial order, and their weights (empty: Optuna's default
  // weights for their count), as Suggest on `study` would use them. For tests and diagnostics.
  std::pair<std::vector<int64_t>, std::vector<double>> BadTrials(const StudyView& study);
  // The same for the good trials l(x) is fitted on.
  std::pair<std::vector<int64_t>, std::vector<double>> GoodTrials(const StudyView& study);

 protected:
  // Trials split into good (below) and bad (above), each in trial order.
  struct Split {
    std::vector<int64_t> below, above;
    std::vector<double> above_weights;  // per above trial; empty: TpeDefaultWeights per group
    std::vector<double> below_weights;  // per below trial; empty: as above_weights
    // Their unit rows (UnitCache), read once per ask for every group.
    std::vector<const double*> below_rows, above_rows;
    // The priors' rows on each side (weight priors_.weight each), after this study's.
    std::vector<const double*> prior_below_rows, prior_above_rows;
  };
  // How many trials the model learns from (the startup phase lasts until n_startup); called
  // first in every ask, before SplitTrials. Multi-objective TPE (motpe_searcher.h) overrides
  // both to rank trials by their objective vectors.
  virtual size_t Observe(const StudyView& study);
  virtual Split SplitTrials(const StudyView& study);
  const TpeOptions& options() const { return options_; }

 private:
  // l and g of one group of dims, kept across asks. l depends only on the good trials' rows, so
  // it is refitted only when the good set or the unit cache changes (at 10,000 trials the best 25
  // rarely do); g is refitted at every ask into the same arrays.
  struct GroupModel {
    std::vector<int64_t> below;         // the good trials l was fitted on
    std::vector<double> below_weights;  // and their weights
    uint64_t generation = 0;            // units_.generation() then (0: never fitted)
    ParzenEstimator l, g;
  };
  Params SuggestOne(const StudyView& study, uint64_t number, const Split& split);
  // Fits l and g on `dims` (indices into the space) over the trials of each side where every
  // dim is active, samples candidates from l and writes the best into `out`. `model` is the
  // group's kept estimators.
  void SampleGroup(const StudyView& study, const std::vector<size_t>& dims, const Split& split,
                   GroupModel& model, Rng& rng, Params& out);
  // Rows of one side's trials where every dim of the group is active (categoricals as their
  // index) into obs_, their weights (from `given`, or Optuna's default) into weights_; then the
  // side's prior rows likewise, at the prior weight.
  void GroupRows(const std::vector<const double*>& rows, const std::vector<size_t>& dims,
                 const std::vector<int>& choices, const std::vector<double>& given,
                 const std::vector<const double*>& prior_rows);
  // The priors' unit rows on this study's space, computed when the space is another one.
  void SyncPriorRows(const SearchSpace& space);

  TpeOptions options_;
  Priors priors_;
  const SearchSpace* prior_space_ = nullptr;
  std::vector<double> prior_rows_;  // PriorUnitRows on prior_space_
  std::vector<size_t> prior_good_, prior_bad_;
  UnitCache units_;
  ObservationIndex index_;                   // the observations and their ranking, updated per ask
  std::vector<GroupModel> models_;           // per parameter, then per joint group (multivariate)
  std::vector<std::vector<size_t>> groups_;  // TpeGroups of the space, per ask
  // Per-ask working arrays, kept to spare allocations.
  std::vector<double> obs_, weights_, x_, best_;
  std::vector<size_t> dims_;
  std::vector<int> choices_;
};

}  // namespace sift::search

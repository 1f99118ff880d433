// Tree-structured Parzen Estimator (Bergstra et al., NeurIPS 2011) with Optuna 3.1's refinements:
// gamma(n) = min(ceil(0.1 n), 25) good trials, a prior component, the magic clip, recency weights,
// 24 candidates drawn from l(x) and the one maximising l(x)/g(x) kept. Univariate by default (one
// estimator pair per parameter, conditional parameters fitted on the trials where they are
// active); `multivariate` models the unconditional parameters jointly.
#pragma once

#include "search/observations.h"
#include "search/searcher.h"
#include "search/tpe/parzen_estimator.h"

namespace sift::search {

struct TpeOptions {
  int64_t n_startup = 10;        // random trials before the model is used
  int64_t n_ei_candidates = 24;
  double gamma = 0.1;            // fraction of trials taken as good...
  int64_t gamma_max = 25;        // ...at most this many
  bool constant_liar = false;    // count running trials as bad ones, to spread parallel workers
  TpeKernelOptions kernel;
};

class TpeSearcher : public Searcher {
 public:
  explicit TpeSearcher(TpeOptions options) : options_(options) {}
  std::vector<Params> Suggest(const StudyView& study, int count) override;

 private:
  // Trials split into good (below) and bad (above), each in trial order.
  struct Split {
    std::vector<int64_t> below, above;
  };
  Split SplitTrials(const StudyView& study, const std::vector<Observation>& obs) const;
  Params SuggestOne(const StudyView& study, uint64_t number, const Split& split);
  // Fits l and g on `dims` (indices into the space) over the trials of each side where every
  // dim is active, samples candidates from l and writes the best into `out`.
  void SampleGroup(const StudyView& study, const std::vector<size_t>& dims, const Split& split,
                   Rng& rng, Params& out);

  // For a 1-d numeric group on space dimension d: the rows (trial `numbers`, with `values`) in
  // the order of the bandwidth sort, read off sorted_. False when that order cannot be used.
  bool SortedRows(const StudyView& study, size_t d, const std::vector<int64_t>& numbers,
                  const std::vector<double>& values, std::vector<size_t>& order);

  TpeOptions options_;
  UnitCache units_;
  // Per space dimension, the unit values of every trial seen so far as (bit pattern, trial
  // number), sorted. Trials' values never change while units_ keeps them, so each ask inserts
  // only the new trials instead of sorting thousands; it starts over with units_.
  struct SortedDim {
    std::vector<std::pair<uint64_t, int64_t>> entries;
    std::vector<char> has;  // by trial number
  };
  std::vector<SortedDim> sorted_;
  uint64_t sorted_generation_ = 0;
  std::vector<int64_t> row_of_;  // scratch: row index by trial number, -1 if not on this side
};

}  // namespace sift::search

// A Parzen (kernel density) estimator over a few dimensions of the unit cube: a weighted mixture
// of product kernels, each a Gaussian truncated to [0, 1] for numeric dimensions and a categorical
// distribution for categorical ones. TPE and BOHB differ only in how they pick bandwidths, so the
// estimator takes them ready-made and the rules live in the builders.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "search/rng.h"

namespace sift::search {

struct TpeKernelOptions;

class ParzenEstimator {
 public:
  // choices[d] = 0 for a numeric dimension (values in [0, 1]), k for a categorical one with k
  // choices (values are the index as a double).
  explicit ParzenEstimator(std::vector<int> choices = {});

  // Drops every component and takes new dimensions, keeping the arrays' capacity: a searcher that
  // refits its estimators at every ask reuses them instead of allocating.
  void Clear(const std::vector<int>& choices);

  // Adds a component. mu/sigma are read for numeric dimensions; probs[d] (k values summing to 1)
  // for categorical ones. Weights need not be normalised.
  void Add(double weight, const std::vector<double>& mu, const std::vector<double>& sigma,
           const std::vector<std::vector<double>>& probs);

  void Reserve(size_t components);
  size_t dims() const { return choices_.size(); }
  size_t components() const { return weight_.size(); }

  // A draw from the mixture (categoricals as index values).
  std::vector<double> Sample(Rng& rng) const;
  // The same draw, written to x[0, dims()).
  void Sample(Rng& rng, double* x) const;
  // log density at x (numeric dims: density w.r.t. Lebesgue measure on [0, 1]; categorical: pmf).
  double LogPdf(const double* x) const;

  // For a 1-d numeric estimator whose components were added in increasing mu with a broad last
  // component (TPE's prior): lets LogPdf visit only the components near x. Components that fall
  // outside the window are those whose log term is > 40 below the last one's, which cannot move
  // a double sum (e^-40 ~ 4e-18).
  void EnableWindow();

 private:
  // Fills a 1-d numeric estimator's arrays directly (thousands of components per ask).
  friend void BuildTpeEstimator(const std::vector<int>&, const double*, size_t, const double*,
                                const TpeKernelOptions&, ParzenEstimator&,
                                const std::vector<size_t>*);
  double WindowedLogPdf(double x) const;
  double MixtureLogPdf(const double* x) const;
  double LogTotalWeight() const;
  // std::log, remembered for the last few arguments: categorical probabilities (and the weights
  // of an all-categorical estimator) repeat across components. The same bits as std::log.
  double MemoLog(double v);

  std::vector<int> choices_;
  std::vector<double> weight_;
  double total_weight_ = 0;
  // Per dimension, per component (structure of arrays so the density loop vectorises).
  std::vector<std::vector<double>> mu_, sigma_, inv_sigma_;
  std::vector<std::vector<double>> log_prob_;  // categorical: component-major, k per component
  std::vector<double> log_const_;              // log weight + log kernel normalisers
  bool windowed_ = false;
  bool numeric_ = false;                             // some dimension is numeric
  double max_sigma_ = 0, max_const_ = 0;             // over all but the last component
  std::vector<std::pair<double, double>> log_memo_;  // (argument, std::log of it)
  size_t log_memo_next_ = 0;
  // Remembered across LogPdf calls until the next Add or Clear: log(total weight), and for a 1-d
  // categorical estimator (whose density takes one value per choice) the density per choice.
  mutable double log_total_weight_ = 0;
  mutable bool log_total_known_ = false;
  mutable std::vector<double> choice_log_pdf_;
  mutable std::vector<char> choice_known_;
  mutable std::vector<double> scratch_;
  // BuildTpeEstimator's working arrays, kept with the estimator it rebuilds.
  std::vector<std::pair<double, size_t>> sorted_;
  std::vector<size_t> order1d_;
  std::vector<double> kernel_sigma_;
  std::vector<char> row_known_;
  std::vector<double> mu_in_, sigma_in_;
  std::vector<std::vector<double>> probs_in_;
};

// Optuna 3.1's TPE bandwidths ("_ParzenEstimator"): prior component at the centre with sigma 1,
// univariate sigmas from neighbour gaps (clipped by the "magic clip"), multivariate ones by
// Scott-like 0.2 * n^(-1/(d+4)) or (bandwidth kScott) by Scott's rule, the observations' weighted
// standard deviation times n^(-1/(d+4)), per dimension. The defaults of TpeKernelOptions are
// Optuna 3.1's; TpeSearcher's are TpeSearcherKernel(). Observations are n rows (row-major,
// choices.size() columns) of unit values / category indices, in trial order, with one weight each.
// `order`, optional for a 1-d numeric estimator, lists the observation indices already sorted by
// (value bit pattern, index) - the order the bandwidth sort would produce - so a caller that keeps
// observations sorted across builds skips that sort.
enum class TpeBandwidth { kOptuna, kScott };
struct TpeKernelOptions {
  bool consider_prior = true;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
  // Multivariate bandwidths: Optuna's rule, or Scott's rule on the observations' spread.
  TpeBandwidth bandwidth = TpeBandwidth::kOptuna;
  // The magic clip's floor, 1 / min(100, 1 + kernels), times this (1: Optuna's).
  double magic_clip_scale = 1.0;
};
ParzenEstimator BuildTpeEstimator(const std::vector<int>& choices,
                                  const std::vector<double>& observations,
                                  const std::vector<double>& weights,
                                  const TpeKernelOptions& options,
                                  const std::vector<size_t>* order = nullptr);
// The same estimator, built into `out` (its arrays reused) from n rows at `observations` and n
// weights at `weights`.
void BuildTpeEstimator(const std::vector<int>& choices, const double* observations, size_t n,
                       const double* weights, const TpeKernelOptions& options, ParzenEstimator& out,
                       const std::vector<size_t>* order = nullptr);

// The key of the bandwidth sort: v's IEEE bit pattern, which orders like v for v >= 0.
uint64_t TpeSortKey(double v);

// Optuna's default weights: flat for the 25 most recent observations, a linear ramp before them.
std::vector<double> TpeDefaultWeights(size_t n);
// The i-th of TpeDefaultWeights(n), alone (the same arithmetic).
double TpeDefaultWeight(size_t n, size_t i);

}  // namespace sift::search

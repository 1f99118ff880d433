// A Parzen (kernel density) estimator over a few dimensions of the unit cube: a weighted mixture
// of product kernels, each a Gaussian truncated to [0, 1] for numeric dimensions and a categorical
// distribution for categorical ones. TPE and BOHB differ only in how they pick bandwidths, so the
// estimator takes them ready-made and the rules live in the builders.
#pragma once

#include <cstdint>
#include <vector>

#include "search/rng.h"

namespace sift::search {

struct TpeKernelOptions;

class ParzenEstimator {
 public:
  // choices[d] = 0 for a numeric dimension (values in [0, 1]), k for a categorical one with k
  // choices (values are the index as a double).
  explicit ParzenEstimator(std::vector<int> choices);

  // Adds a component. mu/sigma are read for numeric dimensions; probs[d] (k values summing to 1)
  // for categorical ones. Weights need not be normalised.
  void Add(double weight, const std::vector<double>& mu, const std::vector<double>& sigma,
           const std::vector<std::vector<double>>& probs);

  void Reserve(size_t components);
  size_t dims() const { return choices_.size(); }
  size_t components() const { return weight_.size(); }

  // A draw from the mixture (categoricals as index values).
  std::vector<double> Sample(Rng& rng) const;
  // log density at x (numeric dims: density w.r.t. Lebesgue measure on [0, 1]; categorical: pmf).
  double LogPdf(const double* x) const;

  // For a 1-d numeric estimator whose components were added in increasing mu with a broad last
  // component (TPE's prior): lets LogPdf visit only the components near x. Components that fall
  // outside the window are those whose log term is > 40 below the last one's, which cannot move
  // a double sum (e^-40 ~ 4e-18).
  void EnableWindow();

 private:
  // Fills a 1-d numeric estimator's arrays directly (thousands of components per ask).
  friend ParzenEstimator BuildTpeEstimator(const std::vector<int>&, const std::vector<double>&,
                                           const std::vector<double>&, const TpeKernelOptions&,
                                           const std::vector<size_t>*);
  double WindowedLogPdf(double x) const;

  std::vector<int> choices_;
  std::vector<double> weight_;
  double total_weight_ = 0;
  // Per dimension, per component (structure of arrays so the density loop vectorises).
  std::vector<std::vector<double>> mu_, sigma_, inv_sigma_;
  std::vector<std::vector<double>> log_prob_;  // categorical: component-major, k per component
  std::vector<double> log_const_;              // log weight + log kernel normalisers
  bool windowed_ = false;
  double max_sigma_ = 0, max_const_ = 0;       // over all but the last component
  mutable std::vector<double> scratch_;
};

// Optuna 3.1's TPE bandwidths ("_ParzenEstimator"): prior component at the centre with sigma 1,
// univariate sigmas from neighbour gaps (clipped by the "magic clip"), multivariate ones by
// Scott-like 0.2 * n^(-1/(d+4)). Observations are n rows (row-major, choices.size() columns) of
// unit values / category indices, in trial order, with one weight each. `order`, optional for a
// 1-d numeric estimator, lists the observation indices already sorted by (value bit pattern,
// index) - the order the bandwidth sort would produce - so a caller that keeps observations
// sorted across builds skips that sort.
struct TpeKernelOptions {
  bool consider_prior = true;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
};
ParzenEstimator BuildTpeEstimator(const std::vector<int>& choices,
                                  const std::vector<double>& observations,
                                  const std::vector<double>& weights,
                                  const TpeKernelOptions& options,
                                  const std::vector<size_t>* order = nullptr);

// The key of the bandwidth sort: v's IEEE bit pattern, which orders like v for v >= 0.
uint64_t TpeSortKey(double v);

// Optuna's default weights: flat for the 25 most recent observations, a linear ramp before them.
std::vector<double> TpeDefaultWeights(size_t n);
// The i-th of TpeDefaultWeights(n), alone (the same arithmetic).
double TpeDefaultWeight(size_t n, size_t i);

}  // namespace sift::search

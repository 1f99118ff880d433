// Exact GP regression with a Matern-5/2 ARD kernel on standardised targets.
//
// The Cholesky factor is grown one row at a time (a bordered Cholesky step, O(n^2) per point) and
// kept between asks: a new observation costs one row instead of a refactorisation. Every row is
// computed by the same code with fixed-order sums whether it is appended now or rebuilt after a
// restart, so the cache never changes a result, bit for bit.
#pragma once

#include <cstddef>
#include <vector>

namespace sift::search {

struct GpHyper {
  std::vector<double> log_lengthscale;  // one per feature
  double log_signal = 0.0;              // log of the signal variance
  double log_noise = -6.9;              // log of the noise variance

  bool operator==(const GpHyper& o) const {
    return log_lengthscale == o.log_lengthscale && log_signal == o.log_signal &&
           log_noise == o.log_noise;
  }
};

// Matern-5/2 between two feature vectors (inv_ls: 1 / lengthscale per feature).
double Matern52(const double* a, const double* b, const double* inv_ls, size_t dims, double signal);

class GaussianProcess {
 public:
  explicit GaussianProcess(size_t dims) : dims_(dims) {}

  // Drops the factor when the hyperparameters change.
  void SetHyper(const GpHyper& hyper);
  const GpHyper& hyper() const { return hyper_; }

  // Makes the factor cover exactly the n rows of `x` (row-major), keeping the longest prefix
  // already factored.
  void SetPoints(const std::vector<double>& x, size_t n);
  void AddPoint(const double* x);  // e.g. a pending trial (kriging believer)
  // The first `rows` points have `extra` times the model's noise variance on top of it (priors
  // from earlier studies, trusted less than this study's own trials). Drops the factor on change.
  void SetNoisyPrefix(size_t rows, double extra);
  void Truncate(size_t n);
  size_t size() const { return n_; }

  // alpha = K^-1 y over the first y.size() points (the rest, if any, are fantasies whose
  // believed values equal the posterior mean, so they do not change the mean).
  void SetTargets(const std::vector<double>& y);

  // Kernel vector of x against all points; then the posterior mean and latent variance.
  void KernelVector(const double* x, double* k) const;
  double Mean(const double* k) const;
  double Variance(const double* k) const;
  double signal() const { return signal_; }
  double noise() const { return noise_; }

 private:
  void AppendRow(const double* x);
  const double* Row(size_t i) const { return l_.data() + i * (i + 1) / 2; }

  size_t dims_;
  GpHyper hyper_;
  std::vector<double> inv_ls_;
  double signal_ = 1.0, noise_ = 1e-3;
  size_t noisy_rows_ = 0;
  double noisy_extra_ = 0;
  bool has_hyper_ = false;
  size_t n_ = 0;
  std::vector<double> x_;  // n x dims
  std::vector<double> l_;  // lower-triangular factor, packed by rows
  std::vector<double> alpha_;
  mutable std::vector<double> v_;
};

// Log marginal likelihood (plus weak log-normal priors on the hyperparameters) and its gradient
// w.r.t. (log lengthscales..., log signal, log noise). Returns -inf when K is not positive
// definite.
double LogMarginalLikelihood(const std::vector<double>& x, const std::vector<double>& y,
                             size_t dims, const GpHyper& hyper, std::vector<double>* gradient);

// Maximises LogMarginalLikelihood by L-BFGS from two fixed starts, within a box.
GpHyper FitHyperparameters(const std::vector<double>& x, const std::vector<double>& y, size_t dims);

}  // namespace sift::search

#include "search/bo/gaussian_process.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

namespace sift::search {
namespace {

constexpr double kSqrt5 = 2.23606797749978969641;
constexpr double kJitter = 1e-8;

// Fixed-order dot product with four accumulators: fast, and identical on every call.
double Dot(const double* a, const double* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

double SquaredDistance(const double* a, const double* b, const double* inv_ls, size_t dims) {
  double r2 = 0;
  for (size_t d = 0; d < dims; ++d) {
    const double t = (a[d] - b[d]) * inv_ls[d];
    r2 += t * t;
  }
  return r2;
}

// Bounds of the hyperparameters (log space), on standardised targets in the unit cube.
constexpr double kMinLogLs = -4.6, kMaxLogLs = 3.0;  // lengthscale in [0.01, 20]
constexpr double kMinLogSignal = -3.0, kMaxLogSignal = 3.0;
constexpr double kMinLogNoise = -13.8, kMaxLogNoise = 0.0;  // noise variance in [1e-6, 1]

}  // namespace

double Matern52(const double* a, const double* b, const double* inv_ls, size_t dims,
                double signal) {
  const double r = std::sqrt(SquaredDistance(a, b, inv_ls, dims));
  return signal * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r * r) * std::exp(-kSqrt5 * r);
}

void GaussianProcess::SetHyper(const GpHyper& hyper) {
  if (has_hyper_ && hyper == hyper_) return;
  hyper_ = hyper;
  has_hyper_ = true;
  inv_ls_.resize(dims_);
  for (size_t d = 0; d < dims_; ++d) inv_ls_[d] = std::exp(-hyper.log_lengthscale[d]);
  signal_ = std::exp(hyper.log_signal);
  noise_ = std::exp(hyper.log_noise);
  Truncate(0);
}

void GaussianProcess::Truncate(size_t n) {
  n_ = std::min(n, n_);
  x_.resize(n_ * dims_);
  l_.resize(n_ * (n_ + 1) / 2);
}

void GaussianProcess::SetPoints(const std::vector<double>& x, size_t n) {
  size_t keep = 0;
  while (keep < std::min(n, n_) &&
         std::equal(x.begin() + keep * dims_, x.begin() + (keep + 1) * dims_,
                    x_.begin() + keep * dims_)) {
    ++keep;
  }
  Truncate(keep);
  for (size_t i = keep; i < n; ++i) AppendRow(x.data() + i * dims_);
}

void GaussianProcess::AddPoint(const double* x) { AppendRow(x); }

void GaussianProcess::SetNoisyPrefix(size_t rows, double extra) {
  if (rows == noisy_rows_ && extra == noisy_extra_) return;
  noisy_rows_ = rows;
  noisy_extra_ = extra;
  Truncate(0);
}

void GaussianProcess::AppendRow(const double* x) {
  const size_t i = n_;
  x_.insert(x_.end(), x, x + dims_);
  l_.resize((i + 1) * (i + 2) / 2);
  double* row = l_.data() + i * (i + 1) / 2;
  // Forward substitution against the rows above: L[0:i,0:i] row = k(x_i, x_0..i-1).
  for (size_t j = 0; j < i; ++j) {
    const double k = Matern52(x, x_.data() + j * dims_, inv_ls_.data(), dims_, signal_);
    const double* lj = Row(j);
    row[j] = (k - Dot(lj, row, j)) / lj[j];
  }
  const double extra = i < noisy_rows_ ? noisy_extra_ * noise_ : 0.0;
  const double d2 = signal_ + noise_ + extra + kJitter - Dot(row, row, i);
  row[i] = std::sqrt(std::max(d2, kJitter));
  n_ = i + 1;
}

void GaussianProcess::SetTargets(const std::vector<double>& y) {
  const size_t m = y.size();
  // Solve L z = y then L^T alpha = z, on the leading m x m block.
  std::vector<double> z(m);
  for (size_t j = 0; j < m; ++j) {
    const double* lj = Row(j);
    z[j] = (y[j] - Dot(lj, z.data(), j)) / lj[j];
  }
  alpha_.assign(m, 0.0);
  for (size_t j = m; j-- > 0;) {
    const double* lj = Row(j);
    alpha_[j] = z[j] / lj[j];
    for (size_t t = 0; t < j; ++t) z[t] -= lj[t] * alpha_[j];
  }
}

void GaussianProcess::KernelVector(const double* x, double* k) const {
  for (size_t j = 0; j < n_; ++j) {
    k[j] = Matern52(x, x_.data() + j * dims_, inv_ls_.data(), dims_, signal_);
  }
}

double GaussianProcess::Mean(const double* k) const { return Dot(k, alpha_.data(), alpha_.size()); }

double GaussianProcess::Variance(const double* k) const {
  v_.resize(n_);
  for (size_t j = 0; j < n_; ++j) {
    const double* lj = Row(j);
    v_[j] = (k[j] - Dot(lj, v_.data(), j)) / lj[j];
  }
  return std::max(signal_ - Dot(v_.data(), v_.data(), n_), 1e-12 * signal_);
}

double LogMarginalLikelihood(const std::vector<double>& x, const std::vector<double>& y,
                             size_t dims, const GpHyper& h, std::vector<double>* gradient) {
  const size_t n = y.size();
  std::vector<double> inv_ls(dims);
  for (size_t d = 0; d < dims; ++d) inv_ls[d] = std::exp(-h.log_lengthscale[d]);
  const double signal = std::exp(h.log_signal), noise = std::exp(h.log_noise);
  Eigen::MatrixXd k(n, n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      k(i, j) = k(j, i) = Matern52(&x[i * dims], &x[j * dims], inv_ls.data(), dims, signal);
    }
    k(i, i) += noise + kJitter;
  }
  Eigen::LLT<Eigen::MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::Map<const Eigen::VectorXd> yv(y.data(), static_cast<Eigen::Index>(n));
  const Eigen::VectorXd alpha = llt.solve(yv);
  double lml = -0.5 * yv.dot(alpha) - 0.5 * static_cast<double>(n) * std::log(2 * M_PI);
  for (size_t i = 0; i < n; ++i) lml -= std::log(llt.matrixLLT()(i, i));
  // Weak log-normal priors: lengthscales around 0.4, unit signal, small noise.
  auto prior = [](double v, double mu, double sd, double* g) {
    *g = -(v - mu) / (sd * sd);
    return -0.5 * (v - mu) * (v - mu) / (sd * sd);
  };
  std::vector<double> pg(dims + 2);
  for (size_t d = 0; d < dims; ++d) lml += prior(h.log_lengthscale[d], std::log(0.4), 1.0, &pg[d]);
  lml += prior(h.log_signal, 0.0, 1.0, &pg[dims]);
  lml += prior(h.log_noise, std::log(1e-3), 2.5, &pg[dims + 1]);
  if (gradient == nullptr) return lml;
  // d lml / d theta = 0.5 tr(W dK/dtheta), W = alpha alpha^T - K^-1.
  Eigen::MatrixXd w = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  std::vector<double>& g = *gradient;
  g.assign(dims + 2, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) {
      const double* a = &x[i * dims];
      const double* b = &x[j * dims];
      const double r = std::sqrt(SquaredDistance(a, b, inv_ls.data(), dims));
      const double e = std::exp(-kSqrt5 * r);
      const double kf = signal * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r * r) * e;
      const double c = w(i, j) * signal * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e;  // x2 sym / 2
      for (size_t d = 0; d < dims; ++d) {
        const double t = (a[d] - b[d]) * inv_ls[d];
        g[d] += c * t * t;
      }
      g[dims] += w(i, j) * kf;
    }
    g[dims] += 0.5 * w(i, i) * signal;
    g[dims + 1] += 0.5 * w(i, i) * noise;
  }
  for (size_t p = 0; p < dims + 2; ++p) g[p] += pg[p];
  return lml;
}

namespace {

std::vector<double> Pack(const GpHyper& h) {
  std::vector<double> v = h.log_lengthscale;
  v.push_back(h.log_signal);
  v.push_back(h.log_noise);
  return v;
}

GpHyper Unpack(const std::vector<double>& v, size_t dims) {
  GpHyper h;
  h.log_lengthscale.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(dims));
  h.log_signal = v[dims];
  h.log_noise = v[dims + 1];
  return h;
}

void Clamp(std::vector<double>& v, size_t dims) {
  for (size_t d = 0; d < dims; ++d) v[d] = std::clamp(v[d], kMinLogLs, kMaxLogLs);
  v[dims] = std::clamp(v[dims], kMinLogSignal, kMaxLogSignal);
  v[dims + 1] = std::clamp(v[dims + 1], kMinLogNoise, kMaxLogNoise);
}

// Projected L-BFGS (memory 6) with Armijo backtracking, maximising f.
std::vector<double> Lbfgs(const std::vector<double>& x0, const std::vector<double>& xs,
                          const std::vector<double>& ys, size_t dims, double* best_f) {
  const size_t p = x0.size();
  auto eval = [&](const std::vector<double>& v, std::vector<double>* g) {
    return -LogMarginalLikelihood(xs, ys, dims, Unpack(v, dims), g);  // minimise the negative
  };
  std::vector<double> x = x0, g, gn;
  double f = eval(x, &g);
  if (!std::isfinite(f)) {
    *best_f = -std::numeric_limits<double>::infinity();
    return x;
  }
  for (double& t : g) t = -t;
  std::vector<std::vector<double>> s_hist, y_hist;
  for (int it = 0; it < 50; ++it) {
    // Two-loop recursion for d = -H g.
    std::vector<double> q = g;
    std::vector<double> a(s_hist.size());
    for (size_t m = s_hist.size(); m-- > 0;) {
      const double rho = 1.0 / Dot(y_hist[m].data(), s_hist[m].data(), p);
      a[m] = rho * Dot(s_hist[m].data(), q.data(), p);
      for (size_t i = 0; i < p; ++i) q[i] -= a[m] * y_hist[m][i];
    }
    double gamma = 1.0;
    if (!s_hist.empty()) {
      gamma = Dot(s_hist.back().data(), y_hist.back().data(), p) /
              Dot(y_hist.back().data(), y_hist.back().data(), p);
    } else {
      gamma = 1.0 / std::max(1.0, std::sqrt(Dot(g.data(), g.data(), p)));
    }
    for (double& t : q) t *= gamma;
    for (size_t m = 0; m < s_hist.size(); ++m) {
      const double rho = 1.0 / Dot(y_hist[m].data(), s_hist[m].data(), p);
      const double b = rho * Dot(y_hist[m].data(), q.data(), p);
      for (size_t i = 0; i < p; ++i) q[i] += s_hist[m][i] * (a[m] - b);
    }
    std::vector<double> d(p);
    for (size_t i = 0; i < p; ++i) d[i] = -q[i];
    if (Dot(d.data(), g.data(), p) >= 0) {
      for (size_t i = 0; i < p; ++i) d[i] = -g[i];
    }
    double step = 1.0, fn = 0;
    std::vector<double> xn(p);
    bool ok = false;
    for (int ls = 0; ls < 25; ++ls, step *= 0.5) {
      for (size_t i = 0; i < p; ++i) xn[i] = x[i] + step * d[i];
      Clamp(xn, dims);
      double decrease = 0;
      for (size_t i = 0; i < p; ++i) decrease += g[i] * (xn[i] - x[i]);
      fn = eval(xn, &gn);
      if (std::isfinite(fn) && fn <= f + 1e-4 * decrease) {
        ok = true;
        break;
      }
    }
    if (!ok) break;
    for (double& t : gn) t = -t;
    std::vector<double> s(p), yv(p);
    for (size_t i = 0; i < p; ++i) {
      s[i] = xn[i] - x[i];
      yv[i] = gn[i] - g[i];
    }
    const double improvement = f - fn;
    x = xn;
    g = gn;
    f = fn;
    if (Dot(s.data(), yv.data(), p) > 1e-12) {
      s_hist.push_back(s);
      y_hist.push_back(yv);
      if (s_hist.size() > 6) {
        s_hist.erase(s_hist.begin());
        y_hist.erase(y_hist.begin());
      }
    }
    // Projected gradient small, or no progress: done.
    double pg = 0;
    for (size_t i = 0; i < p; ++i) {
      std::vector<double> probe = x;
      probe[i] -= g[i];
      Clamp(probe, dims);
      pg = std::max(pg, std::abs(probe[i] - x[i]));
    }
    if (pg < 1e-5 || improvement < 1e-9 * (1.0 + std::abs(f))) break;
  }
  *best_f = -f;
  return x;
}

}  // namespace

GpHyper FitHyperparameters(const std::vector<double>& x, const std::vector<double>& y,
                           size_t dims) {
  GpHyper best;
  double best_f = -std::numeric_limits<double>::infinity();
  // Two fixed starts: a smooth model with some noise and a wiggly, nearly noise-free one.
  const double starts[][3] = {{std::log(0.5), 0.0, std::log(1e-2)},
                              {std::log(0.15), 0.0, std::log(1e-4)}};
  for (const auto& s : starts) {
    GpHyper h;
    h.log_lengthscale.assign(dims, s[0]);
    h.log_signal = s[1];
    h.log_noise = s[2];
    double f;
    std::vector<double> v = Lbfgs(Pack(h), x, y, dims, &f);
    if (f > best_f || best.log_lengthscale.empty()) {
      best_f = f;
      best = Unpack(v, dims);
    }
  }
  return best;
}

}  // namespace sift::search

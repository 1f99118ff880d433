#include "search/tpe/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace sift::search {
namespace {

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Mass of N(mu, s) inside [0, 1]. Beyond 8.5 sd from both ends it is 1.0 exactly in double
// (the tails are < 1e-17), so the two erfc calls are skipped without changing a bit.
double UnitMass(double mu, double s) {
  if (mu >= 8.5 * s && 1.0 - mu >= 8.5 * s) return 1.0;
  return NormalCdf((1.0 - mu) / s) - NormalCdf((0.0 - mu) / s);
}

// Stable LSD radix sort of (value, index) pairs by value, for values >= 0 (whose IEEE bit
// patterns order like integers): the order std::sort on pairs gives when indices are increasing,
// several times faster for thousands of observations. Falls back to std::sort otherwise.
void SortPairs(std::vector<std::pair<double, size_t>>& v) {
  for (const auto& p : v) {
    if (!(p.first >= 0.0)) {
      std::sort(v.begin(), v.end());
      return;
    }
  }
  if (v.size() < 512) {
    // Few values (TPE's bounded sets): a comparison sort on the same key is faster than the
    // radix passes over 2,048 buckets, and orders exactly as they do.
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      const uint64_t ka = TpeSortKey(a.first), kb = TpeSortKey(b.first);
      return ka < kb || (ka == kb && a.second < b.second);
    });
    return;
  }
  std::vector<uint64_t> key(v.size()), key2(v.size());
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&key[i], &v[i].first, sizeof(double));
  std::vector<std::pair<double, size_t>> tmp(v.size());
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : key) ++count[(k >> shift) & (kBuckets - 1)];
    // All keys share this digit (typical for the exponent bits of values in [0, 1]): no-op pass.
    if (count[(key[0] >> shift) & (kBuckets - 1)] == v.size()) continue;
    size_t total = 0;
    for (size_t& c : count) {
      const size_t t = c;
      c = total;
      total += t;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t pos = count[(key[i] >> shift) & (kBuckets - 1)]++;
      tmp[pos] = v[i];
      key2[pos] = key[i];
    }
    v.swap(tmp);
    key.swap(key2);
  }
}

bool AnyNumeric(const std::vector<int>& choices) {
  return std::find(choices.begin(), choices.end(), 0) != choices.end();
}

constexpr size_t kLogMemo = 8;  // arguments MemoLog remembers

// Weighted standard deviation of column d of n rows (dims columns each); 0 for n = 0.
double WeightedStdDev(const double* rows, size_t dims, size_t d, size_t n, const double* weights) {
  double total = 0, mean = 0;
  for (size_t i = 0; i < n; ++i) {
    total += weights[i];
    mean += weights[i] * rows[i * dims + d];
  }
  if (!(total > 0)) return 0;
  mean /= total;
  double var = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dev = rows[i * dims + d] - mean;
    var += weights[i] * dev * dev;
  }
  return std::sqrt(var / total);
}

}  // namespace

uint64_t TpeSortKey(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof(double));
  return b;
}

ParzenEstimator::ParzenEstimator(std::vector<int> choices)
    : choices_(std::move(choices)),
      mu_(choices_.size()),
      sigma_(choices_.size()),
      inv_sigma_(choices_.size()),
      log_prob_(choices_.size()),
      numeric_(AnyNumeric(choices_)) {}

void ParzenEstimator::Clear(const std::vector<int>& choices) {
  choices_ = choices;
  const size_t dims = choices_.size();
  weight_.clear();
  total_weight_ = 0;
  for (auto* arrays : {&mu_, &sigma_, &inv_sigma_, &log_prob_}) {
    arrays->resize(dims);
    for (auto& a : *arrays) a.clear();
  }
  log_const_.clear();
  windowed_ = false;
  numeric_ = AnyNumeric(choices_);
  max_sigma_ = max_const_ = 0;
  log_total_known_ = false;
  choice_known_.clear();
}

double ParzenEstimator::MemoLog(double v) {
  for (const auto& [arg, log] : log_memo_) {
    if (arg == v) return log;  // equal doubles (+0 and -0 alike) have equal logs
  }
  const double log = std::log(v);
  if (log_memo_.size() < kLogMemo) {
    log_memo_.push_back({v, log});
  } else {
    log_memo_[log_memo_next_] = {v, log};
    log_memo_next_ = (log_memo_next_ + 1) % kLogMemo;
  }
  return log;
}

void ParzenEstimator::Add(double weight, const std::vector<double>& mu,
                          const std::vector<double>& sigma,
                          const std::vector<std::vector<double>>& probs) {
  weight_.push_back(weight);
  total_weight_ += weight;
  log_total_known_ = false;
  choice_known_.clear();
  // One log per component: log(weight / prod(sigma sqrt(2 pi) mass)) plus categorical terms.
  double ratio = weight;
  double c = 0;
  for (size_t d = 0; d < choices_.size(); ++d) {
    if (choices_[d] == 0) {
      const double s = sigma[d];
      const double z = UnitMass(mu[d], s);
      mu_[d].push_back(mu[d]);
      sigma_[d].push_back(s);
      inv_sigma_[d].push_back(1.0 / s);
      ratio /= s * std::sqrt(2.0 * M_PI) * std::max(z, 1e-300);
    } else {
      for (double p : probs[d]) log_prob_[d].push_back(MemoLog(std::max(p, 1e-300)));
    }
  }
  log_const_.push_back(c + (numeric_ ? std::log(ratio) : MemoLog(ratio)));
}

std::vector<double> ParzenEstimator::Sample(Rng& rng) const {
  std::vector<double> x(choices_.size());
  Sample(rng, x.data());
  return x;
}

void ParzenEstimator::Sample(Rng& rng, double* x) const {
  // Pick a component by weight, then draw each dimension from it.
  double u = rng.Uniform() * total_weight_;
  size_t k = 0;
  while (k + 1 < weight_.size() && u >= weight_[k]) u -= weight_[k++];
  for (size_t d = 0; d < choices_.size(); ++d) {
    if (choices_[d] == 0) {
      // Rejection from the untruncated normal: the mass inside [0, 1] is at least 34% for
      // mu in [0, 1] and sigma <= 1, so this ends quickly; clamp as a last resort.
      double v = mu_[d][k];
      for (int tries = 0; tries < 200; ++tries) {
        v = mu_[d][k] + sigma_[d][k] * rng.Normal();
        if (v >= 0.0 && v <= 1.0) break;
      }
      x[d] = std::clamp(v, 0.0, 1.0);
    } else {
      const int n = choices_[d];
      const double* lp = log_prob_[d].data() + k * n;
      double r = rng.Uniform();
      int c = 0;
      for (; c + 1 < n; ++c) {
        r -= std::exp(lp[c]);
        if (r < 0) break;
      }
      x[d] = c;
    }
  }
}

void ParzenEstimator::Reserve(size_t n) {
  weight_.reserve(n);
  log_const_.reserve(n);
  for (size_t d = 0; d < choices_.size(); ++d) {
    if (choices_[d] != 0) continue;
    mu_[d].reserve(n);
    sigma_[d].reserve(n);
    inv_sigma_[d].reserve(n);
  }
}

void ParzenEstimator::EnableWindow() {
  if (choices_.size() != 1 || choices_[0] != 0 || weight_.size() < 2) return;
  const size_t m = weight_.size() - 1;
  // Locals, not the members, in the loop: stores through `this` could alias the arrays.
  const double *mu = mu_[0].data(), *sigma = sigma_[0].data(), *log_const = log_const_.data();
  double max_sigma = 0, max_const = log_const[0];
  for (size_t k = 0; k < m; ++k) {
    if (k > 0 && mu[k] < mu[k - 1]) return;
    max_sigma = std::max(max_sigma, sigma[k]);
    max_const = std::max(max_const, log_const[k]);
  }
  max_sigma_ = max_sigma;
  max_const_ = max_const;
  windowed_ = true;
}

double ParzenEstimator::LogTotalWeight() const {
  if (!log_total_known_) {
    log_total_weight_ = std::log(total_weight_);
    log_total_known_ = true;
  }
  return log_total_weight_;
}

double ParzenEstimator::WindowedLogPdf(double x) const {
  const size_t m = weight_.size() - 1;
  const double* mu = mu_[0].data();
  const double* is = inv_sigma_[0].data();
  const double zp = (x - mu[m]) * is[m];
  const double a_last = log_const_[m] - 0.5 * zp * zp;
  // top >= a_last, so a component can matter only if a_k > a_last - 40, which needs
  // |x - mu_k| <= max_sigma * sqrt(2 (max_const - a_last + 40)).
  const double reach = max_sigma_ * std::sqrt(2.0 * std::max(0.0, max_const_ - a_last + 40.0));
  const size_t lo = static_cast<size_t>(std::lower_bound(mu, mu + m, x - reach) - mu);
  const size_t hi = static_cast<size_t>(std::upper_bound(mu, mu + m, x + reach) - mu);
  const size_t count = hi - lo;
  scratch_.resize(count);
  // The log terms and their maximum, kept as four running maxima (the max of a set does not
  // depend on the order it is taken in): one chain of maxsd through every term was the cost.
  double* a = scratch_.data();
  const double* c = log_const_.data() + lo;
  mu += lo;
  is += lo;
  // Two terms at a time, each pair's operations lane by lane (the compiler packs them into one
  // SSE2 instruction each; IEEE arithmetic per lane, so the same bits as one at a time).
  double top0 = a_last, top1 = a_last, top2 = a_last, top3 = a_last;
  size_t k = 0;
  for (; k + 4 <= count; k += 4) {
    double z[4], t[4];
    for (size_t j = 0; j < 4; ++j) z[j] = (x - mu[k + j]) * is[k + j];
    for (size_t j = 0; j < 4; ++j) t[j] = c[k + j] - 0.5 * z[j] * z[j];
    for (size_t j = 0; j < 4; ++j) a[k + j] = t[j];
    top0 = std::max(top0, t[0]);
    top1 = std::max(top1, t[1]);
    top2 = std::max(top2, t[2]);
    top3 = std::max(top3, t[3]);
  }
  for (; k < count; ++k) {
    const double z = (x - mu[k]) * is[k];
    a[k] = c[k] - 0.5 * z * z;
    top0 = std::max(top0, a[k]);
  }
  const double top = std::max(std::max(top0, top1), std::max(top2, top3));
  double sum = std::exp(a_last - top);
  for (k = 0; k < count; ++k) {
    if (a[k] > top - 40.0) sum += std::exp(a[k] - top);
  }
  return top + std::log(sum) - LogTotalWeight();
}

double ParzenEstimator::LogPdf(const double* x) const {
  if (windowed_) return WindowedLogPdf(x[0]);
  if (choices_.size() == 1 && choices_[0] > 0 && x[0] >= 0.0 && x[0] < choices_[0]) {
    // One categorical dimension: the density has k values; each is computed once.
    const auto k = static_cast<size_t>(choices_[0]), c = static_cast<size_t>(x[0]);
    if (choice_known_.size() != k) {
      choice_known_.assign(k, 0);
      choice_log_pdf_.resize(k);
    }
    if (!choice_known_[c]) {
      choice_log_pdf_[c] = MixtureLogPdf(x);
      choice_known_[c] = 1;
    }
    return choice_log_pdf_[c];
  }
  return MixtureLogPdf(x);
}

double ParzenEstimator::MixtureLogPdf(const double* x) const {
  const size_t n = weight_.size();
  if (n == 0) return -INFINITY;  // no mass anywhere
  scratch_.assign(log_const_.begin(), log_const_.end());
  double* a = scratch_.data();
  for (size_t d = 0; d < choices_.size(); ++d) {
    if (choices_[d] == 0) {
      const double xd = x[d];
      const double* mu = mu_[d].data();
      const double* is = inv_sigma_[d].data();
      // Four at a time, lane by lane, as in WindowedLogPdf (the same operations per term).
      size_t k = 0;
      for (; k + 4 <= n; k += 4) {
        double z[4];
        for (size_t j = 0; j < 4; ++j) z[j] = (xd - mu[k + j]) * is[k + j];
        for (size_t j = 0; j < 4; ++j) a[k + j] -= 0.5 * z[j] * z[j];
      }
      for (; k < n; ++k) {
        const double z = (xd - mu[k]) * is[k];
        a[k] -= 0.5 * z * z;
      }
    } else {
      const size_t c = static_cast<size_t>(x[d]);
      const size_t stride = static_cast<size_t>(choices_[d]);
      const double* lp = log_prob_[d].data();
      for (size_t k = 0; k < n; ++k) a[k] += lp[k * stride + c];
    }
  }
  // The maximum over four running maxima, as in WindowedLogPdf.
  double top0 = a[0], top1 = a[0], top2 = a[0], top3 = a[0];
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    top0 = std::max(top0, a[k]);
    top1 = std::max(top1, a[k + 1]);
    top2 = std::max(top2, a[k + 2]);
    top3 = std::max(top3, a[k + 3]);
  }
  for (; k < n; ++k) top0 = std::max(top0, a[k]);
  const double top = std::max(std::max(top0, top1), std::max(top2, top3));
  double sum = 0;
  // Terms below e^-40 of the largest change nothing at double precision; skipping their exp is
  // what keeps a 5,000-component density cheap.
  for (k = 0; k < n; ++k) {
    if (a[k] > top - 40.0) sum += std::exp(a[k] - top);
  }
  return top + std::log(sum) - LogTotalWeight();
}

double TpeDefaultWeight(size_t n, size_t i) {
  const size_t ramp = n >= 25 ? n - 25 : 0;  // numpy.linspace(1/n, 1, n - 25)
  if (i >= ramp) return 1.0;
  const double lo = 1.0 / static_cast<double>(n);
  return ramp == 1 ? lo : lo + (1.0 - lo) * static_cast<double>(i) / (ramp - 1);
}

std::vector<double> TpeDefaultWeights(size_t n) {
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = TpeDefaultWeight(n, i);
  return w;
}

ParzenEstimator BuildTpeEstimator(const std::vector<int>& choices,
                                  const std::vector<double>& observations,
                                  const std::vector<double>& weights, const TpeKernelOptions& o,
                                  const std::vector<size_t>* order) {
  ParzenEstimator est;
  const size_t n = choices.empty() ? 0 : observations.size() / choices.size();
  BuildTpeEstimator(choices, observations.data(), n, weights.data(), o, est, order);
  return est;
}

void BuildTpeEstimator(const std::vector<int>& choices, const double* observations, size_t n,
                       const double* weights, const TpeKernelOptions& o, ParzenEstimator& est,
                       const std::vector<size_t>* order) {
  const size_t dims = choices.size();
  if (dims == 0) n = 0;
  auto obs = [&](size_t i, size_t d) { return observations[i * dims + d]; };
  const size_t kernels = n + (o.consider_prior || n == 0 ? 1 : 0);
  const bool with_prior = kernels > n;
  est.Clear(choices);
  // Sigmas per dimension for the observations (the prior's are fixed), sigma[d * n + i]. A 1-d
  // numeric estimator keeps its components sorted by mu (prior last) so that densities can be
  // windowed.
  std::vector<size_t>& order1d = est.order1d_;
  order1d.clear();
  std::vector<double>& sigma = est.kernel_sigma_;
  sigma.assign(dims * n, 1.0);
  for (size_t d = 0; d < dims; ++d) {
    if (choices[d] != 0 || n == 0) continue;
    double* sigma_d = sigma.data() + d * n;
    if (o.multivariate) {
      // Optuna: 0.2 of the range times n^(-1/(d+4)). Scott's rule: the observations' weighted
      // standard deviation in this dimension times n^(-1/(d+4)), so the kernels narrow as the
      // observations gather (the magic clip below still bounds them).
      const double shrink = std::pow(static_cast<double>(std::max<size_t>(n, 1)),
                                     -1.0 / (static_cast<double>(dims) + 4.0));
      const double s = o.bandwidth == TpeBandwidth::kScott
                           ? WeightedStdDev(observations, dims, d, n, weights) * shrink
                           : 0.2 * shrink;
      std::fill(sigma_d, sigma_d + n, s);
    } else {
      // Neighbour gaps among the observations and the prior's centre, bounded by the ends.
      std::vector<std::pair<double, size_t>>& sorted = est.sorted_;
      sorted.clear();
      if (order != nullptr && dims == 1) {
        // The prior (0.5, index n) goes after every value whose bits are <= those of 0.5. Filled
        // by index, not push_back: that compiles to a store-forwarding stall per element.
        sorted.resize(n + (with_prior ? 1 : 0));
        size_t k = 0;
        bool prior_placed = !with_prior;
        for (size_t i : *order) {
          const double v = obs(i, d);
          if (!prior_placed && TpeSortKey(v) > TpeSortKey(0.5)) {
            sorted[k].first = 0.5;
            sorted[k++].second = n;
            prior_placed = true;
          }
          sorted[k].first = v;
          sorted[k++].second = i;
        }
        if (!prior_placed) {
          sorted[k].first = 0.5;
          sorted[k].second = n;
        }
      } else {
        // By index, not push_back (as above).
        sorted.resize(n + (with_prior ? 1 : 0));
        for (size_t i = 0; i < n; ++i) sorted[i] = {obs(i, d), i};
        if (with_prior) sorted[n] = {0.5, n};
        SortPairs(sorted);
      }
      if (dims == 1 && with_prior) {
        order1d.resize(n);
        size_t k = 0;
        for (const auto& [value, i] : sorted) {
          if (i < n) order1d[k++] = i;
        }
      }
      const size_t m = sorted.size();
      auto at = [&](size_t j) { return j == 0 ? 0.0 : j == m + 1 ? 1.0 : sorted[j - 1].first; };
      for (size_t j = 1; j <= m; ++j) {
        double s = std::max(at(j) - at(j - 1), at(j + 1) - at(j));
        if (!o.consider_endpoints && m >= 2) {
          if (j == 1) s = at(2) - at(1);
          if (j == m) s = at(m) - at(m - 1);
        }
        if (sorted[j - 1].second < n) sigma_d[sorted[j - 1].second] = s;
      }
    }
    const double min_sigma =
        o.consider_magic_clip
            ? o.magic_clip_scale / std::min(100.0, 1.0 + static_cast<double>(kernels))
            : 1e-12;
    for (size_t i = 0; i < n; ++i) sigma_d[i] = std::clamp(sigma_d[i], min_sigma, 1.0);
  }
  if (dims == 1 && choices[0] == 0) {
    // One numeric dimension (TPE's univariate case, thousands of components): fill the arrays
    // directly rather than through Add's per-call vectors; the same arithmetic in the same order.
    est.weight_.resize(kernels);
    est.log_const_.resize(kernels);
    est.mu_[0].resize(kernels);
    est.sigma_[0].resize(kernels);
    est.inv_sigma_[0].resize(kernels);
    for (size_t c = 0; c < kernels; ++c) {
      const size_t i = order1d.size() == n && c < n ? order1d[c] : c;
      const bool prior = i == n;
      const double w = prior ? (n == 0 ? 1.0 : o.prior_weight) : weights[i];
      const double mu = prior ? 0.5 : obs(i, 0), s = prior ? 1.0 : sigma[i];
      est.weight_[c] = w;
      est.total_weight_ += w;
      est.mu_[0][c] = mu;
      est.sigma_[0][c] = s;
      est.inv_sigma_[0][c] = 1.0 / s;
      double ratio = w;
      ratio /= s * std::sqrt(2.0 * M_PI) * std::max(UnitMass(mu, s), 1e-300);
      est.log_const_[c] = 0.0 + std::log(ratio);  // as Add: its categorical sum starts at 0
    }
    if (order1d.size() == n && n > 0) est.EnableWindow();
    return;
  }
  if (dims == 1) {
    // One categorical dimension: a component's probabilities are one of k + 1 rows (its observed
    // choice, or none for the prior), so each row's logs are computed once; the same arithmetic
    // as the general path below and Add.
    const auto k = static_cast<size_t>(choices[0]);
    std::vector<char>& known = est.row_known_;
    known.assign(k + 1, 0);
    std::vector<double>& logs = est.kernel_sigma_;  // unused by categorical dimensions
    logs.resize((k + 1) * k);
    std::vector<double>& probs = est.mu_in_;
    std::vector<double>& log_prob = est.log_prob_[0];
    for (size_t c = 0; c < kernels; ++c) {
      const bool prior = c == n;
      const size_t r = prior ? k : static_cast<size_t>(obs(c, 0));
      if (!known[r]) {
        const double base = o.prior_weight / static_cast<double>(kernels);
        probs.assign(k, base);
        if (!prior) probs[r] += 1.0;
        const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
        for (size_t j = 0; j < k; ++j) {
          logs[r * k + j] = est.MemoLog(std::max(probs[j] / total, 1e-300));
        }
        known[r] = 1;
      }
      const double w = prior ? (n == 0 ? 1.0 : o.prior_weight) : weights[c];
      est.weight_.push_back(w);
      est.total_weight_ += w;
      log_prob.insert(log_prob.end(), logs.begin() + r * k, logs.begin() + (r + 1) * k);
      est.log_const_.push_back(0.0 + est.MemoLog(w));  // as Add without numeric dimensions
    }
    return;
  }
  est.Reserve(kernels);
  std::vector<double>& mu = est.mu_in_;
  std::vector<double>& sig = est.sigma_in_;
  std::vector<std::vector<double>>& probs = est.probs_in_;
  mu.resize(dims);
  sig.resize(dims);
  probs.resize(dims);
  for (size_t c = 0; c < kernels; ++c) {
    const size_t i = order1d.size() == n && c < n ? order1d[c] : c;
    const bool prior = i == n;
    for (size_t d = 0; d < dims; ++d) {
      if (choices[d] == 0) {
        mu[d] = prior ? 0.5 : obs(i, d);
        sig[d] = prior ? 1.0 : sigma[d * n + i];
      } else {
        // Optuna: every choice gets prior_weight / kernels, the observed one 1 more.
        const double base = o.prior_weight / static_cast<double>(kernels);
        probs[d].assign(static_cast<size_t>(choices[d]), base);
        if (!prior) probs[d][static_cast<size_t>(obs(i, d))] += 1.0;
        const double total = std::accumulate(probs[d].begin(), probs[d].end(), 0.0);
        for (double& p : probs[d]) p /= total;
      }
    }
    est.Add(prior ? (n == 0 ? 1.0 : o.prior_weight) : weights[i], mu, sig, probs);
  }
  if (order1d.size() == n && n > 0) est.EnableWindow();
}

}  // namespace sift::search

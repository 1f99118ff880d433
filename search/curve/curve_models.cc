#include "search/curve/curve_models.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sift::search {
namespace {

// Rows of the basis table kept per grid; epochs past it are computed at each use.
constexpr int64_t kCachedEpochs = 4096;
// Components whose weight is below exp(-kNegligible) of the best's are dropped.
constexpr double kNegligible = 30.0;
constexpr double kPi = 3.14159265358979323846;

void LogSpaced(double lo, double hi, int count, std::vector<double>& out) {
  out.clear();
  for (int i = 0; i < count; ++i) {
    out.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / (count - 1)));
  }
}

}  // namespace

const char* ToString(CurveFamily f) {
  switch (f) {
    case CurveFamily::kPowerLaw:
      return "pow";
    case CurveFamily::kExponential:
      return "exp";
    case CurveFamily::kLogPower:
      return "logpow";
    case CurveFamily::kWeibull:
      return "weibull";
  }
  return "unknown";
}

double CurveBasis(const CurveShape& s, double t) {
  switch (s.family) {
    case CurveFamily::kPowerLaw:
      return -std::pow(t, -s.scale);
    case CurveFamily::kExponential:
      return -std::exp(-t / s.scale);
    case CurveFamily::kLogPower: {
      const double r = std::pow(t / s.scale, s.power);
      return r / (1.0 + r);
    }
    case CurveFamily::kWeibull:
      return -std::exp(-std::pow(t / s.scale, s.power));
  }
  return 0.0;
}

CurveGrid::CurveGrid(int64_t horizon) : horizon_(std::max<int64_t>(1, horizon)) {
  // Ranges wide enough for curves that saturate within an epoch or two and for ones still
  // rising almost linearly at the horizon (scales up to 4x it).
  const double h = static_cast<double>(horizon_);
  std::vector<double> a, s, p;
  first_[0] = 0;
  LogSpaced(0.02, 3.0, 32, a);
  for (double v : a) shapes_.push_back({CurveFamily::kPowerLaw, v, 1.0});
  first_[1] = shapes_.size();
  LogSpaced(0.5, 4.0 * h, 32, s);
  for (double v : s) shapes_.push_back({CurveFamily::kExponential, v, 1.0});
  first_[2] = shapes_.size();
  LogSpaced(0.5, 4.0 * h, 16, s);
  LogSpaced(0.3, 4.0, 10, p);
  for (CurveFamily f : {CurveFamily::kLogPower, CurveFamily::kWeibull}) {
    for (double sv : s) {
      for (double pv : p) shapes_.push_back({f, sv, pv});
    }
    first_[static_cast<int>(f) + 1] = shapes_.size();
  }
  for (const CurveShape& shape : shapes_) {
    const double one = CurveBasis(shape, 1.0);
    const double span = CurveBasis(shape, h) - one;
    at_one_.push_back(one);
    span_.push_back(span);
    usable_.push_back(span > 1e-9 * (std::abs(one) + 1e-3) ? 1 : 0);
  }
  rows_.resize(static_cast<size_t>(std::min(horizon_, kCachedEpochs)));
}

void CurveGrid::Fill(int64_t t, double* out) const {
  const auto x = static_cast<double>(t);
  for (size_t j = 0; j < shapes_.size(); ++j) {
    out[j] = usable_[j] ? (CurveBasis(shapes_[j], x) - at_one_[j]) / span_[j] : 0.0;
  }
}

const double* CurveGrid::At(int64_t t) {
  const auto i = static_cast<size_t>(std::max<int64_t>(t, 1) - 1);
  if (i < rows_.size()) {
    if (rows_[i].empty()) {
      rows_[i].resize(shapes_.size());
      Fill(t, rows_[i].data());
    }
    return rows_[i].data();
  }
  scratch_.resize(shapes_.size());
  Fill(t, scratch_.data());
  return scratch_.data();
}

void CurveSums::Add(CurveGrid& grid, int64_t epoch, double score) {
  if (!std::isfinite(score) || (n_ > 0 && epoch <= last_epoch_)) return;
  if (n_ == 0) {
    y0_ = score;
    first_epoch_ = epoch;
    sg_.assign(grid.size(), 0.0);
    sgg_.assign(grid.size(), 0.0);
    sgy_.assign(grid.size(), 0.0);
  }
  // Shifted by the first score, so that the sums of squares do not cancel away the noise.
  const double y = score - y0_;
  ++n_;
  last_epoch_ = epoch;
  sy_ += y;
  syy_ += y * y;
  lo_ = std::min(lo_, y);
  hi_ = std::max(hi_, y);
  points_.push_back({static_cast<double>(epoch), y});
  const double* g = grid.At(epoch);
  for (size_t j = 0; j < sg_.size(); ++j) {
    sg_[j] += g[j];
    sgg_[j] += g[j] * g[j];
    sgy_[j] += g[j] * y;
  }
}

double StudentTCdf(double t, int64_t dof) {
  if (std::isnan(t)) return 0.5;
  if (dof > 100 || dof < 1) return 0.5 * std::erfc(-t / std::sqrt(2.0));
  const double x = t / std::sqrt(static_cast<double>(dof));
  const double c2 = 1.0 / (1.0 + x * x);
  const double sin = std::isinf(x) ? std::copysign(1.0, x) : x * std::sqrt(c2);
  double a;
  if (dof % 2 == 1) {
    double sum = 0.0;
    if (dof > 1) {
      double term = std::sqrt(c2);
      sum = term;
      for (int64_t i = 1; 2 * i + 1 <= dof - 2; ++i) {
        term *= c2 * static_cast<double>(2 * i) / static_cast<double>(2 * i + 1);
        sum += term;
      }
    }
    a = (2.0 / kPi) * (std::atan(x) + sin * sum);
  } else {
    double term = 1.0, sum = 1.0;
    for (int64_t i = 1; 2 * i <= dof - 2; ++i) {
      term *= c2 * static_cast<double>(2 * i - 1) / static_cast<double>(2 * i);
      sum += term;
    }
    a = sin * sum;
  }
  return std::clamp(0.5 + 0.5 * a, 0.0, 1.0);
}

CurveFitter::CurveFitter(double level) {
  const double p = 0.5 + 0.5 * std::clamp(level, 1e-6, 1.0 - 1e-9);
  quantile_.resize(kTabulatedDof + 1);
  for (int64_t dof = 0; dof <= kTabulatedDof; ++dof) {
    double lo = 0.0, hi = 1e6;  // bisection: fixed steps, the same result everywhere
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (StudentTCdf(mid, dof) < p ? lo : hi) = mid;
    }
    quantile_[static_cast<size_t>(dof)] = 0.5 * (lo + hi);
  }
}

double CurveFitter::Quantile(int64_t dof) const {
  return quantile_[static_cast<size_t>(dof >= 1 && dof <= kTabulatedDof ? dof : 0)];
}

CurvePrediction CurveFitter::Summarise(const std::vector<CurveComponent>& components, int64_t dof,
                                       std::vector<double>* weights) const {
  CurvePrediction out;
  std::vector<double> local;
  std::vector<double>& w = weights != nullptr ? *weights : local;
  w.clear();
  if (components.empty()) return out;
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& c : components) top = std::max(top, c.log_weight);
  double total = 0.0;
  for (const auto& c : components) {
    w.push_back(std::exp(c.log_weight - top));
    total += w.back();
  }
  double mean = 0.0;
  for (size_t i = 0; i < components.size(); ++i) {
    w[i] /= total;
    mean += w[i] * components[i].mean;
  }
  // A Student-t's variance is its scale's times dof / (dof - 2); it is infinite below 3, where
  // 3x stands in (the interval itself uses the t quantile on the scale).
  const double inflate = dof > 2 ? static_cast<double>(dof) / static_cast<double>(dof - 2) : 3.0;
  double scale2 = 0.0, curve = 0.0, obs = 0.0;
  for (size_t i = 0; i < components.size(); ++i) {
    const CurveComponent& c = components[i];
    const double d2 = (c.mean - mean) * (c.mean - mean);
    scale2 += w[i] * (c.curve_var + d2);
    curve += w[i] * (inflate * c.curve_var + d2);
    obs += w[i] * (inflate * (c.curve_var + c.noise_var) + d2);
  }
  out.mean = mean;
  out.sd_curve = std::sqrt(curve);
  out.sd_obs = std::sqrt(obs);
  const double half = Quantile(dof) * std::sqrt(scale2);
  out.lo = mean - half;
  out.hi = mean + half;
  return out;
}

namespace {

// One shape's least-squares sums over the points: of the normalised shape g, g^2 and g * y.
struct ShapeSums {
  double sg = 0, sgg = 0, sgy = 0;
};

// What every shape's fit shares: the points' count and moments, the noise floor, the prior.
struct FitContext {
  double n, my, syy, floor, log_prior, y0;
  double prior_sse;  // the noise prior's pseudo-residuals, added to every shape's
  int64_t dof;       // of the residuals and the prior together
};

// The closed-form fit of start and gain (gain >= 0) for one shape, as a component predicting at
// the normalised target `at`; false when the points leave the gain undetermined.
bool FitShape(const FitContext& f, const ShapeSums& s, double at, CurveComponent& out,
              double& start, double& gain) {
  const double mg = s.sg / f.n;
  const double sxx = s.sgg - s.sg * mg;
  if (!(sxx > 1e-12 * f.n)) return false;
  const double sxy = s.sgy - s.sg * f.my;
  // Least squares under gain >= 0: the unconstrained optimum, or the constant on its boundary.
  gain = std::max(0.0, sxy / sxx);
  start = f.y0 + f.my - gain * mg;
  const double sse = std::max(f.syy - gain * sxy, f.floor) + f.prior_sse;
  const double noise = sse / static_cast<double>(f.dof);
  const double x = at - mg;
  // The profile likelihood (start, gain and noise at their optimum): the marginal one, under a
  // flat prior on the gain, adds -log(sxx) / 2 and so favours exactly the shapes the points
  // say least about, whose extrapolations are the wildest (it biased the tests' predictions up).
  out.log_weight = f.log_prior - 0.5 * static_cast<double>(f.dof) * std::log(sse);
  out.mean = f.y0 + f.my + gain * x;
  out.curve_var = noise * (1.0 / f.n + x * x / sxx);
  out.noise_var = noise;
  return true;
}

FitContext Context(const CurveGrid& grid, const CurveSums& sums, CurveFamily family,
                   const NoisePrior& prior) {
  const int64_t n = sums.points();
  const double sy = sums.sum(), y0 = sums.first_score();
  double spread = sums.spread();
  FitContext f;
  f.n = static_cast<double>(n);
  f.dof = n - 2 + std::max<int64_t>(0, prior.dof);
  f.prior_sse = prior.dof > 0 ? static_cast<double>(prior.dof) * prior.var : 0.0;
  f.y0 = y0;
  f.my = sy / f.n;
  f.syy = sums.sum_squares() - sy * f.my;
  // A floor on the residuals, relative to the data's spread, keeps noiseless curves finite.
  spread = std::max(spread, 1e-12 * std::max(1.0, std::abs(y0)));
  f.floor = f.n * (1e-7 * spread) * (1e-7 * spread);
  f.log_prior = -std::log(static_cast<double>(grid.Last(family) - grid.First(family)));
  return f;
}

// Makes `c` the fit's most likely shape when it is.
void Consider(FamilyFit& fit, const CurveComponent& c, const CurveShape& shape, double start,
              double gain) {
  if (fit.components.empty() || c.log_weight > fit.best_log_weight) {
    fit.best_log_weight = c.log_weight;
    fit.shape = shape;
    fit.start = start;
    fit.gain = gain;
    fit.noise_var = c.noise_var;
  }
  fit.components.push_back(c);
}

}  // namespace

FamilyFit CurveFitter::Fit(CurveGrid& grid, const CurveSums& sums, CurveFamily family,
                           const Options& options) const {
  FamilyFit out;
  out.family = family;
  if (sums.n_ < kMinPoints || sums.sg_.size() != grid.size()) return out;
  const size_t first = grid.First(family), last = grid.Last(family);
  // The three rows needed, copied: At may reuse its scratch row for epochs past the cache.
  const auto copy = [&](int64_t t) {
    const double* row = grid.At(t);
    return std::vector<double>(row + first, row + last);
  };
  const std::vector<double> at_first = copy(sums.first_epoch_), at_last = copy(sums.last_epoch_);
  const std::vector<double> at_target = copy(options.target > 0 ? options.target : grid.horizon());
  const FitContext f = Context(grid, sums, family, options.prior);
  out.components.reserve(last - first + 1);
  for (size_t j = first; j < last; ++j) {
    const size_t k = j - first;
    if (!grid.Usable(j) || at_last[k] - at_first[k] < kMinShareSeen) continue;
    CurveComponent c;
    double start, gain;
    if (FitShape(f, {sums.sg_[j], sums.sgg_[j], sums.sgy_[j]}, at_target[k], c, start, gain)) {
      Consider(out, c, grid.shape(j), start, gain);
    }
  }
  if (out.components.empty()) return out;
  const double best = out.best_log_weight;
  double total = 0.0;
  for (const auto& c : out.components) total += std::exp(c.log_weight - best);
  out.log_evidence = best + std::log(total);
  out.components.erase(
      std::remove_if(out.components.begin(), out.components.end(),
                     [&](const CurveComponent& c) { return c.log_weight < best - kNegligible; }),
      out.components.end());
  out.ok = true;
  out.dof = f.dof;
  if (options.refine) AddRefined(grid, sums, options, out);
  if (options.summarise) out.prediction = Summarise(out.components, f.dof);
  return out;
}

void CurveFitter::AddRefined(const CurveGrid& grid, const CurveSums& sums, const Options& options,
                             FamilyFit& fit) const {
  // The best shape, refined on the points, joins as one more shape of the same prior.
  CurveShape refined = fit.shape;
  const auto h = static_cast<double>(grid.horizon());
  if (!fit.ok || !Refine(sums, h, refined)) return;
  const double one = CurveBasis(refined, 1.0), span = CurveBasis(refined, h) - one;
  ShapeSums s;
  for (const auto& [t, y] : sums.points_) {
    const double g = NormalisedBasis(refined, t, one, span);
    s.sg += g;
    s.sgg += g * g;
    s.sgy += g * y;
  }
  const auto at = [&](int64_t t) {
    return NormalisedBasis(refined, static_cast<double>(t), one, span);
  };
  if (at(sums.last_epoch_) - at(sums.first_epoch_) < kMinShareSeen) return;
  CurveComponent c;
  double start, gain;
  const FitContext f = Context(grid, sums, fit.family, options.prior);
  if (!FitShape(f, s, at(options.target > 0 ? options.target : grid.horizon()), c, start, gain)) {
    return;
  }
  const double hi = std::max(fit.log_evidence, c.log_weight);
  fit.log_evidence = hi + std::log(std::exp(fit.log_evidence - hi) + std::exp(c.log_weight - hi));
  Consider(fit, c, refined, start, gain);
}

FamilyFit FitCurve(CurveFamily family, const std::vector<std::pair<int64_t, double>>& points,
                   int64_t horizon, int64_t target, double level) {
  CurveGrid grid(horizon);
  CurveSums sums;
  for (const auto& [epoch, score] : points) sums.Add(grid, epoch, score);
  CurveFitter::Options options;
  options.target = target;
  return CurveFitter(level).Fit(grid, sums, family, options);
}

}  // namespace sift::search

#include "search/curve/curve_ensemble.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sift::search {
namespace {

// Components below this share of the weight are left out of the tail sum: their total is far
// below any threshold probability a scheduler would use, and they are most of the work.
constexpr double kSkipWeight = 1e-9;

}  // namespace

EnsembleForecast CurveEnsemble::Forecast(CurveGrid& grid, const CurveSums& sums, int64_t target,
                                         const NoisePrior& prior) const {
  EnsembleForecast out;
  out.points = sums.points();
  std::array<double, kCurveFamilyCount> evidence;
  evidence.fill(-std::numeric_limits<double>::infinity());
  const double family_prior = -std::log(static_cast<double>(kCurveFamilyCount));
  // Every family on its grid, then the best shapes of the two most likely families refined: the
  // refinement is most of a fit's cost, and the others' hardly move the forecast (one alone
  // missed where two families' grids drew the same points about as well).
  std::array<FamilyFit, kCurveFamilyCount> fits;
  CurveFitter::Options options;
  options.target = target;
  options.prior = prior;
  options.refine = false;
  options.summarise = false;
  std::array<int, kCurveFamilyCount> order;
  for (int f = 0; f < kCurveFamilyCount; ++f) {
    fits[static_cast<size_t>(f)] = fitter_.Fit(grid, sums, static_cast<CurveFamily>(f), options);
    order[static_cast<size_t>(f)] = f;
  }
  const auto likelier = [&](int a, int b) {
    const FamilyFit &x = fits[static_cast<size_t>(a)], &y = fits[static_cast<size_t>(b)];
    if (x.ok != y.ok) return x.ok;
    return x.ok && (x.best_log_weight > y.best_log_weight ||
                    (x.best_log_weight == y.best_log_weight && a < b));
  };
  std::sort(order.begin(), order.end(), likelier);
  for (size_t i = 0; i < 2; ++i) {
    fitter_.AddRefined(grid, sums, options, fits[static_cast<size_t>(order[i])]);
  }
  double best = -std::numeric_limits<double>::infinity();
  for (const FamilyFit& fit : fits) {  // refinement may have changed which shape is the best
    if (fit.ok && fit.best_log_weight > best) {
      best = fit.best_log_weight;
      out.noise_var = fit.noise_var;
    }
  }
  size_t count = 0;
  for (const FamilyFit& fit : fits) count += fit.ok ? fit.components.size() : 0;
  out.components.reserve(count);
  for (int f = 0; f < kCurveFamilyCount; ++f) {
    FamilyFit& fit = fits[static_cast<size_t>(f)];
    if (!fit.ok) continue;
    out.dof = fit.dof;
    evidence[static_cast<size_t>(f)] = fit.log_evidence;
    for (CurveComponent& c : fit.components) {
      c.log_weight += family_prior;
      out.components.push_back(c);
    }
  }
  if (out.components.empty()) return out;
  const double top = *std::max_element(evidence.begin(), evidence.end());
  double total = 0;
  for (double e : evidence) total += std::exp(e - top);
  for (size_t f = 0; f < evidence.size(); ++f) {
    out.family_weight[f] = std::exp(evidence[f] - top) / total;
  }
  out.prediction = fitter_.Summarise(out.components, out.dof, &out.weights);
  out.ok = true;
  return out;
}

double CurveEnsemble::ProbabilityAbove(const EnsembleForecast& forecast, double threshold) {
  if (!forecast.ok) return std::nan("");
  double above = 0;
  for (size_t i = 0; i < forecast.components.size(); ++i) {
    if (forecast.weights[i] < kSkipWeight) continue;
    const CurveComponent& c = forecast.components[i];
    above += forecast.weights[i] *
             StudentTCdf((c.mean - threshold) / std::sqrt(c.curve_var + c.noise_var), forecast.dof);
  }
  return std::clamp(above, 0.0, 1.0);
}

double CurveEnsemble::ProbabilityBetter(const EnsembleForecast& forecast, double value,
                                        bool maximize) {
  return ProbabilityAbove(forecast, maximize ? value : -value);
}

CurvePrediction CurveEnsemble::InValues(const CurvePrediction& p, bool maximize) {
  if (maximize) return p;
  CurvePrediction v = p;
  v.mean = -p.mean;
  v.lo = -p.hi;
  v.hi = -p.lo;
  return v;
}

}  // namespace sift::search

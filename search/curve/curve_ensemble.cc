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

EnsembleForecast CurveEnsemble::Forecast(CurveGrid& grid, const CurveSums& sums,
                                         int64_t target, const NoisePrior& prior) const {
  EnsembleForecast out;
  out.points = sums.points();
  std::array<double, kCurveFamilyCount> evidence;
  evidence.fill(-std::numeric_limits<double>::infinity());
  const double family_prior = -std::log(static_cast<double>(kCurveFamilyCount));
  double best = -std::numeric_limits<double>::infinity();
  for (int f = 0; f < kCurveFamilyCount; ++f) {
    FamilyFit fit = fitter_.Fit(grid, sums, static_cast<CurveFamily>(f), target, prior);
    if (!fit.ok) continue;
    out.dof = fit.dof;
    if (fit.best_log_weight > best) {
      best = fit.best_log_weight;
      out.noise_var = fit.noise_var;
    }
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
  out.prediction = fitter_.Summarise(out.components, out.dof);
  out.ok = true;
  return out;
}

double CurveEnsemble::ProbabilityAbove(const EnsembleForecast& forecast, double threshold) {
  if (!forecast.ok) return std::nan("");
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& c : forecast.components) top = std::max(top, c.log_weight);
  double total = 0, above = 0;
  for (const auto& c : forecast.components) {
    const double w = std::exp(c.log_weight - top);
    total += w;
    if (w < kSkipWeight) continue;
    const double scale = std::sqrt(c.curve_var + c.noise_var);
    above += w * StudentTCdf((c.mean - threshold) / scale, forecast.dof);
  }
  return std::clamp(above / total, 0.0, 1.0);
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

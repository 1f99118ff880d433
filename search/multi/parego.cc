#include "search/multi/parego.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/rng.h"

namespace sift::search {
namespace {

constexpr uint64_t kParegoStream = 0x50415245;  // "PARE"

}  // namespace

std::vector<double> ParegoWeights(uint64_t seed, uint64_t draw, size_t objectives) {
  Rng rng(DeriveSeed(seed, {draw, kParegoStream}));
  std::vector<double> w(objectives);
  double sum = 0;
  for (double& x : w) {
    double u = rng.Uniform();
    while (u <= 0.0) u = rng.Uniform();
    x = -std::log(u);
    sum += x;
  }
  for (double& x : w) x /= sum;
  return w;
}

std::vector<double> ParegoScalars(const std::vector<TrialPoint>& points,
                                  const std::vector<double>& weights, double rho) {
  const size_t k = weights.size();
  std::vector<double> lo(k, std::numeric_limits<double>::infinity());
  std::vector<double> hi(k, -std::numeric_limits<double>::infinity());
  for (const TrialPoint& p : points) {
    if (!p.feasible()) continue;
    for (size_t i = 0; i < k; ++i) {
      if (!std::isfinite(p.values[i])) continue;
      lo[i] = std::min(lo[i], p.values[i]);
      hi[i] = std::max(hi[i], p.values[i]);
    }
  }
  std::vector<double> out(points.size(), 0.0);
  double worst = std::numeric_limits<double>::infinity();
  std::vector<double> violations;
  for (size_t j = 0; j < points.size(); ++j) {
    const TrialPoint& p = points[j];
    if (!p.feasible()) {
      violations.push_back(p.violation);
      continue;
    }
    double most = 0, sum = 0;
    for (size_t i = 0; i < k; ++i) {
      const double v = p.values[i];
      double unit;
      if (std::isnan(v) || v == -std::numeric_limits<double>::infinity()) {
        unit = 0;
      } else if (v == std::numeric_limits<double>::infinity() || !(hi[i] > lo[i])) {
        unit = 1;
      } else {
        unit = (v - lo[i]) / (hi[i] - lo[i]);
      }
      const double loss = weights[i] * (1 - unit);
      most = std::max(most, loss);
      sum += loss;
    }
    out[j] = -(most + rho * sum);
    worst = std::min(worst, out[j]);
  }
  if (violations.empty()) return out;
  if (!std::isfinite(worst)) worst = 0;  // no feasible point
  std::sort(violations.begin(), violations.end());
  violations.erase(std::unique(violations.begin(), violations.end()), violations.end());
  const auto distinct = static_cast<double>(violations.size());
  for (size_t j = 0; j < points.size(); ++j) {
    if (points[j].feasible()) continue;
    const auto r = std::lower_bound(violations.begin(), violations.end(), points[j].violation) -
                   violations.begin();
    out[j] = worst - 0.5 * (static_cast<double>(r) + 1) / distinct;
  }
  return out;
}

}  // namespace sift::search

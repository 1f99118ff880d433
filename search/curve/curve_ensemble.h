// The ensemble of learning-curve families: every family's shapes in one mixture, each family
// weighed by its likelihood summed over its shapes (equal prior per family, uniform over each
// family's grid), which is the posterior over families and shapes under those priors. It gives
// the predicted final value with its interval and the probability that a trial's final value
// beats a threshold, in either direction of the objective.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "search/curve/curve_models.h"

namespace sift::search {

struct EnsembleForecast {
  bool ok = false;  // false: too few points, or no family fitted
  int64_t points = 0;
  int64_t dof = 0;
  CurvePrediction prediction;  // in scores (larger is better)
  double noise_var = 0;        // the most likely shape's residual variance
  std::array<double, kCurveFamilyCount> family_weight{};  // posterior weights, summing to 1
  std::vector<CurveComponent> components;  // of every family, with the family's prior
  std::vector<double> weights;             // theirs, normalised
};

class CurveEnsemble {
 public:
  explicit CurveEnsemble(double level = 0.9) : fitter_(level) {}

  // Forecast at epoch `target` (the grid's horizon when 0) from a curve's sums, in scores.
  EnsembleForecast Forecast(CurveGrid& grid, const CurveSums& sums, int64_t target = 0,
                            const NoisePrior& prior = {}) const;

  // P(an observation at the target scores above `threshold`): the Student-t mixture's tail.
  static double ProbabilityAbove(const EnsembleForecast& forecast, double threshold);

  // The same for objective values: P(the final value is better than `value`), where better is
  // larger when `maximize` and smaller otherwise (the forecast is in scores, -value when
  // minimising).
  static double ProbabilityBetter(const EnsembleForecast& forecast, double value, bool maximize);

  // The prediction in objective values: mean and interval negated and swapped when minimising.
  static CurvePrediction InValues(const CurvePrediction& p, bool maximize);

  const CurveFitter& fitter() const { return fitter_; }

 private:
  CurveFitter fitter_;
};

}  // namespace sift::search

#include "search/curve/curve_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace curve_models_test {

using Points = std::vector<std::pair<int64_t, double>>;

// A curve of `shape` rising by `gain` from `start` at epoch 1, off the fitter's grid.
double Truth(const CurveShape& shape, double start, double gain, int64_t horizon, double t) {
  const double one = CurveBasis(shape, 1.0);
  return start + gain * (CurveBasis(shape, t) - one) /
                     (CurveBasis(shape, static_cast<double>(horizon)) - one);
}

Points Sample(const CurveShape& shape, int64_t horizon, int64_t epochs, double noise, Rng* rng) {
  Points p;
  for (int64_t t = 1; t <= epochs; ++t) {
    const double e = noise > 0 ? noise * rng->Normal() : 0.0;
    p.push_back({t, Truth(shape, 0.5, 0.4, horizon, static_cast<double>(t)) + e});
  }
  return p;
}

struct FamilyCase {
  CurveShape shape;
  int64_t seen;  // epochs observed of 30
};

const std::vector<FamilyCase>& Cases() {
  static const std::vector<FamilyCase> cases = {
      {{CurveFamily::kPowerLaw, 0.7, 1.0}, 8},    {{CurveFamily::kPowerLaw, 0.13, 1.0}, 10},
      {{CurveFamily::kExponential, 4.3, 1.0}, 8}, {{CurveFamily::kExponential, 17.0, 1.0}, 12},
      {{CurveFamily::kLogPower, 5.5, 1.7}, 10},   {{CurveFamily::kWeibull, 6.1, 1.3}, 10},
  };
  return cases;
}

TEST(StudentTCdf, MatchesKnownValues) {
  EXPECT_DOUBLE_EQ(StudentTCdf(0.0, 5), 0.5);
  EXPECT_NEAR(StudentTCdf(1.0, 1), 0.75, 1e-12);  // Cauchy
  EXPECT_NEAR(StudentTCdf(1.0, 2), 0.5 + 0.5 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(StudentTCdf(2.015048, 5), 0.95, 1e-6);  // tables
  EXPECT_NEAR(StudentTCdf(-2.228139, 10), 0.025, 1e-6);
  EXPECT_NEAR(StudentTCdf(1.644854, 1000), 0.95, 1e-6);  // the normal's
  CurveFitter fitter(0.9);
  EXPECT_NEAR(fitter.Quantile(3), 2.353363, 1e-5);
  EXPECT_NEAR(fitter.Quantile(1000), 1.644854, 1e-5);
}

// Noiseless data from each family, with parameters off the grid: the extrapolation from the
// first epochs to epoch 30 lands within 2% of the curve's rise (0.4) of the truth, and within
// the stated interval.
TEST(CurveModels, NoiselessCurvesExtrapolateToTheirFinalValue) {
  for (const auto& c : Cases()) {
    const FamilyFit fit = FitCurve(c.shape.family, Sample(c.shape, 30, c.seen, 0.0, nullptr), 30);
    ASSERT_TRUE(fit.ok) << ToString(c.shape.family);
    const double truth = Truth(c.shape, 0.5, 0.4, 30, 30.0);
    EXPECT_NEAR(fit.prediction.mean, truth, 0.02 * 0.4)
        << ToString(c.shape.family) << " scale " << c.shape.scale;
    EXPECT_LE(fit.prediction.lo, fit.prediction.hi);
    EXPECT_GE(fit.gain, 0.0);
    EXPECT_NEAR(fit.start + fit.gain, fit.prediction.mean, 0.02)
        << "the most likely shape predicts much as the mixture does";
  }
}

// Gaussian noise (sd 0.01 on a rise of 0.4): the 90% interval of the curve's final value covers
// the truth in at least 80% of 200 seeds for each family (measured: 82-96%). The mean leans
// optimistic where the points stop short of the plateau (the posterior is skewed: a monotone
// curve cannot end below where it is, but may rise on), by at most 0.6 of the interval's
// half-width (measured: up to 0.53, Weibull) and never pessimistic by more than a tenth of it:
// for early stopping, the error that keeps a trial rather than kills it.
TEST(CurveModels, NoisyIntervalsCoverTheTruth) {
  for (const auto& c : Cases()) {
    const double truth = Truth(c.shape, 0.5, 0.4, 30, 30.0);
    int covered = 0, fitted = 0;
    double error = 0, half = 0;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      Rng rng(seed + 1);
      const FamilyFit fit =
          FitCurve(c.shape.family, Sample(c.shape, 30, c.seen, 0.01, &rng), 30, 0, 0.9);
      if (!fit.ok) continue;
      ++fitted;
      covered += fit.prediction.lo <= truth && truth <= fit.prediction.hi;
      error += fit.prediction.mean - truth;
      half += 0.5 * (fit.prediction.hi - fit.prediction.lo);
    }
    ASSERT_EQ(fitted, 200) << ToString(c.shape.family);
    EXPECT_GE(covered, 160) << ToString(c.shape.family) << " scale " << c.shape.scale;
    EXPECT_LT(error / fitted, 0.6 * half / fitted) << ToString(c.shape.family);
    EXPECT_GT(error / fitted, -0.1 * half / fitted) << ToString(c.shape.family);
  }
}

TEST(CurveModels, TooFewPointsOrNoRiseGiveNoFit) {
  EXPECT_FALSE(FitCurve(CurveFamily::kPowerLaw, {{1, 0.1}, {2, 0.2}}, 30).ok);
  // A horizon of one epoch leaves nothing to extrapolate.
  EXPECT_FALSE(FitCurve(CurveFamily::kExponential, {{1, 0.1}, {2, 0.2}, {3, 0.3}}, 1).ok);
}

TEST(CurveModels, DecreasingDataFitsAFlatCurve) {
  // Gain is constrained to >= 0: a falling curve is predicted to stay about where it has been.
  const FamilyFit fit =
      FitCurve(CurveFamily::kPowerLaw, {{1, 0.9}, {2, 0.8}, {3, 0.7}, {4, 0.6}}, 30);
  ASSERT_TRUE(fit.ok);
  EXPECT_LE(fit.prediction.mean, 0.9);
  EXPECT_GE(fit.gain, 0.0);
}

TEST(CurveModels, IncrementalSumsEqualARebuild) {
  // Growing the sums point by point with fits in between equals building them at once, bit for
  // bit: what makes a restarted coordinator's decisions the same.
  Rng rng(3);
  const Points p = Sample(Cases()[4].shape, 30, 12, 0.01, &rng);
  CurveGrid grid(30);
  CurveFitter fitter;
  CurveSums grown;
  for (const auto& [t, y] : p) {
    grown.Add(grid, t, y);
    fitter.Fit(grid, grown, CurveFamily::kWeibull);
  }
  CurveGrid fresh_grid(30);
  CurveSums rebuilt;
  for (const auto& [t, y] : p) rebuilt.Add(fresh_grid, t, y);
  for (int f = 0; f < kCurveFamilyCount; ++f) {
    const FamilyFit a = fitter.Fit(grid, grown, static_cast<CurveFamily>(f));
    const FamilyFit b = fitter.Fit(fresh_grid, rebuilt, static_cast<CurveFamily>(f));
    EXPECT_EQ(a.prediction.mean, b.prediction.mean);
    EXPECT_EQ(a.prediction.lo, b.prediction.lo);
    EXPECT_EQ(a.log_evidence, b.log_evidence);
  }
}

}  // namespace curve_models_test
}  // namespace sift::search

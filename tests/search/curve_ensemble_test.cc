#include "search/curve/curve_ensemble.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace curve_ensemble_test {

constexpr int64_t kHorizon = 30;

// Start + gain * the normalised curve of `shape`: the families' own form, off the grid.
double Truth(const CurveShape& shape, double start, double gain, double t) {
  const double one = CurveBasis(shape, 1.0);
  return start + gain * NormalisedBasis(shape, t, one,
                                        CurveBasis(shape, static_cast<double>(kHorizon)) - one);
}

EnsembleForecast ForecastOf(const std::vector<double>& scores, const CurveEnsemble& ensemble) {
  CurveGrid grid(kHorizon);
  CurveSums sums;
  for (size_t i = 0; i < scores.size(); ++i) sums.Add(grid, static_cast<int64_t>(i + 1), scores[i]);
  return ensemble.Forecast(grid, sums);
}

std::vector<double> Curve(const CurveShape& shape, int64_t epochs, double noise, Rng* rng) {
  std::vector<double> v;
  for (int64_t t = 1; t <= epochs; ++t) {
    v.push_back(Truth(shape, 0.5, 0.4, static_cast<double>(t)) +
                (noise > 0 ? noise * rng->Normal() : 0));
  }
  return v;
}

TEST(CurveEnsemble, NoiselessCurvesOfEveryFamilyExtrapolate) {
  // Whichever family drew the curve, the mixture of all four predicts epoch 30 from the first 10
  // within 3% of the rise, with the weight mostly on families that can draw it.
  const CurveEnsemble ensemble;
  const std::vector<CurveShape> shapes = {{CurveFamily::kPowerLaw, 0.45, 1},
                                          {CurveFamily::kExponential, 6.2, 1},
                                          {CurveFamily::kLogPower, 4.1, 1.4},
                                          {CurveFamily::kWeibull, 5.3, 0.8}};
  for (const CurveShape& s : shapes) {
    const EnsembleForecast f = ForecastOf(Curve(s, 10, 0, nullptr), ensemble);
    ASSERT_TRUE(f.ok);
    EXPECT_NEAR(f.prediction.mean, Truth(s, 0.5, 0.4, kHorizon), 0.03 * 0.4) << ToString(s.family);
    EXPECT_NEAR(std::accumulate(f.family_weight.begin(), f.family_weight.end(), 0.0), 1.0, 1e-12);
    EXPECT_LE(f.prediction.lo, f.prediction.mean);
    EXPECT_GE(f.prediction.hi, f.prediction.mean);
  }
}

TEST(CurveEnsemble, ProbabilityFallsAsTheThresholdRises) {
  Rng rng(5);
  const EnsembleForecast f =
      ForecastOf(Curve({CurveFamily::kExponential, 5.0, 1}, 8, 0.01, &rng), CurveEnsemble());
  ASSERT_TRUE(f.ok);
  double last = 1.0;
  for (double thr = 0.3; thr < 1.6; thr += 0.05) {
    const double p = CurveEnsemble::ProbabilityAbove(f, thr);
    EXPECT_LE(p, last + 1e-12) << thr;
    last = p;
  }
  EXPECT_GT(CurveEnsemble::ProbabilityAbove(f, 0.3), 0.999);
  EXPECT_LT(CurveEnsemble::ProbabilityAbove(f, 1.6), 0.01);
  const double at_mean = CurveEnsemble::ProbabilityAbove(f, f.prediction.mean);
  EXPECT_GT(at_mean, 0.2);
  EXPECT_LT(at_mean, 0.8);
}

TEST(CurveEnsemble, DirectionIsHandled) {
  // A loss falling from 1.0: scores are its negation. P(final loss < L) is P(score > -L), and
  // the prediction comes back in losses with its interval the right way round.
  Rng rng(9);
  std::vector<double> scores = Curve({CurveFamily::kPowerLaw, 0.6, 1}, 9, 0.01, &rng);
  for (double& s : scores) s = -(1.5 - s);  // loss = 1.5 - curve
  const EnsembleForecast f = ForecastOf(scores, CurveEnsemble());
  ASSERT_TRUE(f.ok);
  const CurvePrediction loss = CurveEnsemble::InValues(f.prediction, /*maximize=*/false);
  EXPECT_NEAR(loss.mean, 1.5 - Truth({CurveFamily::kPowerLaw, 0.6, 1}, 0.5, 0.4, kHorizon), 0.05);
  EXPECT_LT(loss.lo, loss.mean);
  EXPECT_GT(loss.hi, loss.mean);
  for (double l : {0.5, 0.6, 0.7, 0.9}) {
    EXPECT_EQ(CurveEnsemble::ProbabilityBetter(f, l, false),
              CurveEnsemble::ProbabilityAbove(f, -l));
  }
  EXPECT_LT(CurveEnsemble::ProbabilityBetter(f, 0.3, false), 0.05);  // far better than likely
  EXPECT_GT(CurveEnsemble::ProbabilityBetter(f, 1.2, false), 0.95);  // already better
}

TEST(CurveEnsemble, SmallProbabilitiesAreSafe) {
  // What a stopping rule rests on: over 400 random curves (random family, shape, rise, noise,
  // epochs seen) and thresholds near their end, of the cases given P < 0.05 of ending above the
  // threshold, at most 5% (plus sampling slack) end above it (measured: 4 of 136).
  Rng rng(11);
  int flagged = 0, wrong = 0;
  for (int i = 0; i < 400; ++i) {
    const auto family = static_cast<CurveFamily>(rng.Below(kCurveFamilyCount));
    CurveShape s{family, 1.0, std::exp(rng.Uniform(std::log(0.5), std::log(3.0)))};
    s.scale = family == CurveFamily::kPowerLaw
                  ? std::exp(rng.Uniform(std::log(0.1), std::log(2.0)))
                  : std::exp(rng.Uniform(std::log(2.0), std::log(15.0)));
    const double gain = rng.Uniform(0.1, 0.5), noise = rng.Uniform(0.002, 0.02);
    const auto seen = static_cast<int64_t>(5 + rng.Below(10));
    std::vector<double> v;
    for (int64_t t = 1; t <= seen; ++t) v.push_back(Truth(s, 0.3, gain, t) + noise * rng.Normal());
    const double final_obs = Truth(s, 0.3, gain, kHorizon) + noise * rng.Normal();
    const double threshold = Truth(s, 0.3, gain, kHorizon) + rng.Uniform(-0.05, 0.15);
    const EnsembleForecast f = ForecastOf(v, CurveEnsemble());
    ASSERT_TRUE(f.ok);
    if (CurveEnsemble::ProbabilityAbove(f, threshold) < 0.05) {
      ++flagged;
      wrong += final_obs > threshold;
    }
  }
  RecordProperty("flagged", flagged);
  RecordProperty("wrong", wrong);
  EXPECT_GT(flagged, 100);  // the rule has something to say
  EXPECT_LE(wrong, 0.05 * flagged + 2 * std::sqrt(0.05 * flagged)) << wrong << " of " << flagged;
}

TEST(CurveEnsemble, ANoisePriorKeepsFewPointsHonest) {
  // Three points: some shape passes through all of them, and alone it would claim a noise near
  // zero. A prior of 4 pseudo-residuals of sd 0.01 keeps an observation's sd near that.
  CurveGrid grid(kHorizon);
  CurveSums sums;
  sums.Add(grid, 1, 0.50);
  sums.Add(grid, 2, 0.61);
  sums.Add(grid, 3, 0.67);
  const CurveEnsemble ensemble;
  const EnsembleForecast bare = ensemble.Forecast(grid, sums);
  const EnsembleForecast with = ensemble.Forecast(grid, sums, 0, {4, 1e-4});
  ASSERT_TRUE(bare.ok && with.ok);
  EXPECT_EQ(with.dof, bare.dof + 4);
  EXPECT_GE(with.noise_var, 0.8 * 1e-4);
  EXPECT_GE(with.prediction.sd_obs, std::sqrt(0.8 * 1e-4));
  EXPECT_LT(bare.noise_var, 1e-4);
}

TEST(CurveEnsemble, TooFewPointsIsNotOk) {
  const EnsembleForecast f = ForecastOf({0.1, 0.2}, CurveEnsemble());
  EXPECT_FALSE(f.ok);
  EXPECT_TRUE(std::isnan(CurveEnsemble::ProbabilityAbove(f, 0.0)));
}

}  // namespace curve_ensemble_test
}  // namespace sift::search

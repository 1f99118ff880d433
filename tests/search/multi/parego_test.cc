#include "search/multi/parego.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sift::search {
namespace parego_test {

TrialPoint Point(int64_t trial, std::vector<double> values, double violation = 0) {
  return {trial, std::move(values), violation};
}

TEST(ParegoWeights, LieOnTheSimplexAndCoverItUniformly) {
  for (size_t k = 2; k <= 4; ++k) {
    std::vector<double> mean(k, 0.0);
    int corner = 0;  // draws with one weight above 0.8: rare but present when uniform
    const int draws = 4000;
    for (int d = 0; d < draws; ++d) {
      const std::vector<double> w = ParegoWeights(7, static_cast<uint64_t>(d), k);
      ASSERT_EQ(w.size(), k);
      double sum = 0;
      for (size_t i = 0; i < k; ++i) {
        EXPECT_GE(w[i], 0.0);
        sum += w[i];
        mean[i] += w[i] / draws;
        corner += w[i] > 0.8;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
    // Uniform on the simplex: each weight's mean is 1/k, and P(w_i > 0.8) = 0.2^(k-1).
    for (double m : mean) EXPECT_NEAR(m, 1.0 / static_cast<double>(k), 0.02) << k;
    const double expected = static_cast<double>(k) * std::pow(0.2, static_cast<double>(k - 1));
    EXPECT_NEAR(corner / static_cast<double>(draws), expected, 0.25 * expected + 0.005) << k;
  }
}

TEST(ParegoWeights, AFunctionOfTheSeedAndTheDrawAlone) {
  EXPECT_EQ(ParegoWeights(3, 40, 2), ParegoWeights(3, 40, 2));
  EXPECT_NE(ParegoWeights(3, 40, 2), ParegoWeights(3, 41, 2));
  EXPECT_NE(ParegoWeights(3, 40, 2), ParegoWeights(4, 40, 2));
}

TEST(ParegoScalars, NormalizeEachObjectiveOverTheFeasibleRange) {
  // Oriented (larger is better): accuracy in [0.5, 0.9], minus dollars in [-10, -2].
  const std::vector<TrialPoint> points = {Point(0, {0.9, -10}), Point(1, {0.5, -2}),
                                          Point(2, {0.7, -6})};
  // Losses (0, 1), (1, 0) and (0.5, 0.5) under equal weights: the two extremes tie, the middle
  // one is the best compromise.
  const std::vector<double> s = ParegoScalars(points, {0.5, 0.5});
  EXPECT_DOUBLE_EQ(s[0], -(0.5 + 0.05 * 0.5));
  EXPECT_DOUBLE_EQ(s[1], -(0.5 + 0.05 * 0.5));
  EXPECT_DOUBLE_EQ(s[2], -(0.25 + 0.05 * 0.5));
  // A unit does not change anything: dollars in cents give the same scalars.
  std::vector<TrialPoint> cents = points;
  for (TrialPoint& p : cents) p.values[1] *= 100;
  const std::vector<double> c = ParegoScalars(cents, {0.5, 0.5});
  for (size_t j = 0; j < s.size(); ++j) EXPECT_NEAR(c[j], s[j], 1e-12);
  // The weights choose the direction: leaning on accuracy, trial 0 is the best.
  const std::vector<double> a = ParegoScalars(points, {0.9, 0.1});
  EXPECT_GT(a[0], a[2]);
  EXPECT_GT(a[2], a[1]);
  // An infeasible point's objectives do not stretch the range.
  std::vector<TrialPoint> more = points;
  more.push_back(Point(3, {5.0, -100}, 1.0));
  const std::vector<double> m = ParegoScalars(more, {0.5, 0.5});
  for (size_t j = 0; j < s.size(); ++j) EXPECT_DOUBLE_EQ(m[j], s[j]);
}

TEST(ParegoScalars, TheAugmentationRanksAWeaklyDominatedPointLower) {
  // b is dominated by a, yet both have the same Chebyshev maximum (objective 0's loss).
  const std::vector<TrialPoint> points = {Point(0, {0, 0}), Point(1, {0, -0.5}), Point(2, {1, -1})};
  const std::vector<double> plain = ParegoScalars(points, {0.5, 0.5}, 0.0);
  EXPECT_EQ(plain[0], plain[1]);
  const std::vector<double> s = ParegoScalars(points, {0.5, 0.5});
  EXPECT_GT(s[0], s[1]);
  EXPECT_NEAR(s[0] - s[1], kParegoRho * 0.25, 1e-12);
}

TEST(ParegoScalars, InfeasiblePointsRankBehindEveryFeasibleOneByViolation) {
  const std::vector<TrialPoint> points = {Point(0, {0.9, -1}, 2.0), Point(1, {0.1, -9}),
                                          Point(2, {0.5, -5}),      Point(3, {0.95, -0.5}, 0.5),
                                          Point(4, {0.2, -8}, 0.5), Point(5, {0.3, -3}, INFINITY),
                                          Point(6, {0.8, -2})};
  const std::vector<double> s = ParegoScalars(points, {0.3, 0.7});
  double worst_feasible = 0;
  for (int j : {1, 2, 6}) worst_feasible = std::min(worst_feasible, s[j]);
  for (int j : {0, 3, 4, 5}) EXPECT_LT(s[j], worst_feasible) << j;
  EXPECT_EQ(s[3], s[4]);  // the same violation: the objectives do not matter
  EXPECT_GT(s[4], s[0]);
  EXPECT_GT(s[0], s[5]);  // an infinite violation is the worst
  EXPECT_DOUBLE_EQ(s[5], worst_feasible - 0.5);
  // With no feasible point at all the order by violation stands alone.
  const std::vector<double> none =
      ParegoScalars({Point(0, {1, 1}, 3.0), Point(1, {0, 0}, 1.0)}, {0.5, 0.5});
  EXPECT_GT(none[1], none[0]);
  EXPECT_LT(none[0], 0.0);
}

TEST(ParegoScalars, ADivergedTrialIsTheWorstFeasibleResult) {
  // EndedPoints gives a diverged trial -infinity in every objective.
  const double inf = INFINITY;
  const std::vector<TrialPoint> points = {Point(0, {0.9, -10}), Point(1, {0.5, -2}),
                                          Point(2, {-inf, -inf}), Point(3, {0.6, -inf})};
  const std::vector<double> w = {0.25, 0.75};
  const std::vector<double> s = ParegoScalars(points, w);
  EXPECT_DOUBLE_EQ(s[2], -(0.75 + kParegoRho));  // every loss 1
  for (int j : {0, 1, 3}) EXPECT_GT(s[j], s[2]) << j;
  EXPECT_LT(s[3], s[1]);  // dominated by trial 1
  for (double v : s) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace parego_test
}  // namespace sift::search

#include "search/multi/nsga2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sift::search {
namespace nsga2_test {

TEST(Nsga2, CrowdedComparisonIsRankThenCrowdingThenIndex) {
  const std::vector<int> ranks{1, 0, 0, 0};
  const std::vector<double> crowding{9, 1, 2, 2};
  EXPECT_TRUE(CrowdedBetter(1, 0, ranks, crowding));  // rank first, whatever the crowding
  EXPECT_TRUE(CrowdedBetter(2, 1, ranks, crowding));  // same rank: more room
  EXPECT_TRUE(CrowdedBetter(2, 3, ranks, crowding));  // all equal: lower index
  EXPECT_FALSE(CrowdedBetter(3, 2, ranks, crowding));
}

TEST(Nsga2, SurvivorsAreWholeRanksThenTheLeastCrowded) {
  // Front 0 is the four on the line (crowding inf, 1, 1.5, inf as in the pareto test); 4 is
  // behind them.
  const Points p{{0, 4}, {1, 3}, {2, 2}, {4, 0}, {0, 0}};
  const std::vector<int> ranks = NonDominatedRanks(p);
  EXPECT_EQ(Nsga2Survivors(p, ranks, 3), (std::vector<int>{0, 3, 2}));
  EXPECT_EQ(Nsga2Survivors(p, ranks, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(Nsga2Survivors(p, ranks, 9), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(Nsga2Survivors(p, ranks, 0).empty());
  const std::vector<double> crowding = CrowdingByRank(p, ranks);
  EXPECT_DOUBLE_EQ(crowding[2], 1.5);
  EXPECT_EQ(crowding[4], std::numeric_limits<double>::infinity());  // alone in its rank
}

TEST(Nsga2, TournamentKeepsTheBetterOfTwoDraws) {
  const std::vector<int> ranks{3, 0, 2, 1, 4};
  const std::vector<double> crowding(5, 0.0);
  Rng rng(9), replay(9);
  const std::vector<int> parents = TournamentParents(ranks, crowding, 200, rng);
  ASSERT_EQ(parents.size(), 200u);
  int best = 0;
  for (int chosen : parents) {
    const int a = static_cast<int>(replay.Below(5)), b = static_cast<int>(replay.Below(5));
    EXPECT_EQ(chosen, ranks[a] <= ranks[b] ? a : b);
    best += chosen == 1;
  }
  // The best member wins whenever it is drawn: 1 - (4/5)^2 = 36% of tournaments.
  EXPECT_NEAR(best / 200.0, 0.36, 0.1);
}

TEST(Nsga2, SbxByHand) {
  // Parents 0.2 and 0.6, eta 1, u 0.25. Below: room 0.2, beta = 1 + 2 * 0.2 / 0.4 = 2,
  // alpha = 2 - 2^-2 = 1.75, u <= 1 / alpha so betaq = sqrt(0.25 * 1.75); child 0.4 - 0.2 betaq.
  // Above: room 0.4, beta 3, alpha = 2 - 1/9; child 0.4 + 0.2 sqrt(0.25 * alpha).
  const auto [c1, c2] = SbxCoordinate(0.2, 0.6, 0.25, 1);
  EXPECT_NEAR(c1, 0.4 - 0.2 * std::sqrt(0.4375), 1e-15);
  EXPECT_NEAR(c2, 0.4 + 0.2 * std::sqrt(0.25 * (2 - 1.0 / 9)), 1e-15);
  // u = 0: both at the midpoint. Parents placed alike from the bounds, u = 1 / alpha: the parents.
  const auto [m1, m2] = SbxCoordinate(0.2, 0.6, 0, 1);
  EXPECT_DOUBLE_EQ(m1, 0.4);
  EXPECT_DOUBLE_EQ(m2, 0.4);
  const double alpha = 2 - std::pow(1 + 2 * 0.4 / 0.2, -2.0);
  const auto [p1, p2] = SbxCoordinate(0.6, 0.4, 1 / alpha, 1);
  EXPECT_NEAR(p1, 0.4, 1e-15);
  EXPECT_NEAR(p2, 0.6, 1e-15);
  EXPECT_EQ(SbxCoordinate(0.3, 0.3, 0.9, 1), (std::pair<double, double>{0.3, 0.3}));
}

TEST(Nsga2, SbxStaysInTheCubeAndKeepsTheParentsMeanAwayFromTheBounds) {
  Rng rng(4);
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto [c1, c2] = SbxCoordinate(0.45, 0.55, rng.Uniform(), 20);
    sum += c1 + c2;
    const auto [e1, e2] = SbxCoordinate(0.01, 0.99, rng.Uniform(), 0.5);
    EXPECT_TRUE(e1 >= 0 && e1 <= 1 && e2 >= 0 && e2 <= 1);
  }
  EXPECT_NEAR(sum / n, 1.0, 1e-3);
}

TEST(Nsga2, PolynomialMutationByHand) {
  EXPECT_DOUBLE_EQ(PolynomialCoordinate(0.3, 0.5, 20), 0.3);  // u = 0.5: no step
  EXPECT_NEAR(PolynomialCoordinate(0.3, 0, 20), 0.0, 1e-12);  // the lower bound
  EXPECT_NEAR(PolynomialCoordinate(0.3, 1, 20), 1.0, 1e-12);  // the upper bound
  // eta 1, u 0.25: v = 0.5 + 0.5 * 0.7^2 = 0.745, step sqrt(v) - 1.
  EXPECT_NEAR(PolynomialCoordinate(0.3, 0.25, 1), 0.3 + std::sqrt(0.745) - 1, 1e-15);
  // u 0.75: v = 0.5 + 0.5 * 0.3^2 = 0.545, step 1 - sqrt(v).
  EXPECT_NEAR(PolynomialCoordinate(0.3, 0.75, 1), 0.3 + 1 - std::sqrt(0.545), 1e-15);
}

TEST(Nsga2, ChildrenFollowTheVariationSettings) {
  const std::vector<double> a{0.1, 0.2, 0.3}, b{0.9, 0.8, 0.7};
  Nsga2Variation copy;
  copy.crossover_probability = 0;
  copy.mutation_probability = 0;
  Rng rng(1);
  EXPECT_EQ(Nsga2Children(a, b, copy, rng), std::make_pair(a, b));
  Nsga2Variation swap = copy;
  swap.crossover_probability = 1;
  swap.uniform_crossover = true;
  swap.swap_probability = 1;
  EXPECT_EQ(Nsga2Children(a, b, swap, rng), std::make_pair(b, a));
  // Defaults: same seed, same children; always in the cube.
  Rng r1(77), r2(77);
  for (int i = 0; i < 100; ++i) {
    const auto c = Nsga2Children(a, b, {}, r1);
    EXPECT_EQ(c, Nsga2Children(a, b, {}, r2));
    for (const auto* v : {&c.first, &c.second}) {
      for (double x : *v) EXPECT_TRUE(x >= 0 && x <= 1);
    }
  }
}

}  // namespace nsga2_test
}  // namespace sift::search

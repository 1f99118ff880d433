#include "search/multi/pareto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "search/rng.h"

namespace sift::search {
namespace pareto_test {

const double kInf = std::numeric_limits<double>::infinity();

TEST(Pareto, OrientedNegatesMinimizedObjectivesAndSendsNanLast) {
  EXPECT_EQ(Oriented({1, 2}, {Direction::kMaximize, Direction::kMinimize}),
            (std::vector<double>{1, -2}));
  EXPECT_EQ(Oriented({std::nan(""), 3}, {Direction::kMinimize, Direction::kMinimize}),
            (std::vector<double>{-kInf, -3}));
}

TEST(Pareto, Dominates) {
  EXPECT_TRUE(Dominates({1, 2}, {1, 1}));
  EXPECT_FALSE(Dominates({1, 1}, {1, 2}));
  EXPECT_FALSE(Dominates({1, 1}, {1, 1}));  // equal: neither
  EXPECT_FALSE(Dominates({2, 1}, {1, 2}));
  EXPECT_FALSE(Dominates({1, 2}, {2, 1}));
  EXPECT_TRUE(Dominates({0, 0, 1}, {0, 0, -kInf}));
}

TEST(Pareto, RanksOfAHandWorkedSet) {
  // A(4,1) B(3,3) C(1,4) form the front; D(2,2) is under B, F(3,1) under A and B; E(1,1) is
  // under D and F, so one rank further.
  const Points p{{4, 1}, {3, 3}, {1, 4}, {2, 2}, {1, 1}, {3, 1}};
  EXPECT_EQ(NonDominatedRanks(p), (std::vector<int>{0, 0, 0, 1, 2, 1}));
  EXPECT_EQ(Fronts(NonDominatedRanks(p)), (std::vector<std::vector<int>>{{0, 1, 2}, {3, 5}, {4}}));
}

TEST(Pareto, EqualPointsShareARank) {
  EXPECT_EQ(NonDominatedRanks(Points{{1, 1}, {1, 1}, {0, 0}}), (std::vector<int>{0, 0, 1}));
  EXPECT_TRUE(NonDominatedRanks(Points{}).empty());
}

// The definition, peeled front by front: rank r is what no unranked point dominates.
std::vector<int> PeeledRanks(const Points& p) {
  std::vector<int> rank(p.size(), -1);
  for (int r = 0;; ++r) {
    std::vector<size_t> layer;
    for (size_t i = 0; i < p.size(); ++i) {
      if (rank[i] >= 0) continue;
      bool dominated = false;
      for (size_t j = 0; j < p.size() && !dominated; ++j) {
        dominated = rank[j] < 0 && Dominates(p[j], p[i]);
      }
      if (!dominated) layer.push_back(i);
    }
    if (layer.empty()) return rank;
    for (size_t i : layer) rank[i] = r;
  }
}

TEST(Pareto, RanksMatchPeelingOnRandomSets) {
  Rng rng(7);
  for (int dims = 2; dims <= 4; ++dims) {
    for (int round = 0; round < 20; ++round) {
      Points p(60, std::vector<double>(dims));
      // Coarse values, so ties and equal points occur.
      for (auto& x : p) {
        for (auto& v : x) v = static_cast<double>(rng.Below(6));
      }
      EXPECT_EQ(NonDominatedRanks(p), PeeledRanks(p)) << dims << " objectives, round " << round;
    }
  }
}

TEST(Pareto, TwoObjectiveSweepMatchesPeelingWithInfinitiesAndLargeSets) {
  Rng rng(11);
  for (int round = 0; round < 30; ++round) {
    Points p(round < 20 ? 80 : 400, std::vector<double>(2));
    for (auto& x : p) {
      for (auto& v : x) {
        const uint64_t c = rng.Below(round < 10 ? 5 : 1000);
        v = c == 0 ? -kInf : c == 1 ? kInf : static_cast<double>(c);
      }
    }
    EXPECT_EQ(NonDominatedRanks(p), PeeledRanks(p)) << "round " << round;
  }
}

TEST(Pareto, CrowdingDistanceOfAHandWorkedFront) {
  // On objective 0 the order is a, b, c, d (range 4): b gets (2-0)/4, c gets (4-1)/4; on
  // objective 1 the reverse: c gets (3-0)/4, b (4-2)/4. The ends get infinity.
  const Points p{{0, 4}, {1, 3}, {2, 2}, {4, 0}};
  const std::vector<double> d = CrowdingDistance(p, {0, 1, 2, 3});
  EXPECT_EQ(d[0], kInf);
  EXPECT_DOUBLE_EQ(d[1], 1.0);
  EXPECT_DOUBLE_EQ(d[2], 1.5);
  EXPECT_EQ(d[3], kInf);
  // Only the named points count, in the order named.
  const std::vector<double> sub = CrowdingDistance(p, {2, 1, 0});
  EXPECT_DOUBLE_EQ(sub[1], 2.0);  // b between a and c: (2-0)/2 + (4-2)/2
  EXPECT_EQ(sub[0], kInf);
  EXPECT_EQ(sub[2], kInf);
}

TEST(Pareto, CrowdingDistanceWithAFlatObjectiveAndTinyFronts) {
  const std::vector<double> d = CrowdingDistance(Points{{0, 5}, {1, 5}, {3, 5}}, {0, 1, 2});
  EXPECT_DOUBLE_EQ(d[1], 1.0);  // (3-0)/3 from objective 0; objective 1 has no range
  EXPECT_EQ(CrowdingDistance(Points{{1, 2}}, {0}), (std::vector<double>{kInf}));
  EXPECT_TRUE(CrowdingDistance(Points{}, {}).empty());
}

}  // namespace pareto_test
}  // namespace sift::search

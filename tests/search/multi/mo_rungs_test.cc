#include "search/multi/mo_rungs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/rng.h"

namespace sift::search {
namespace mo_rungs_test {

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(MoRungs, WholeRanksComeFirst) {
  // Front {1, 2, 3}; 4 and 5 behind it; 6 behind those.
  const std::vector<RungPoint> p{{4, {2, 2}}, {1, {4, 1}}, {6, {0, 0}},
                                 {2, {3, 3}}, {5, {3, 1}}, {3, {1, 4}}};
  EXPECT_EQ(MoTopTrials(p, 3), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Sorted(MoTopTrials(p, 5)), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(MoTopTrials(p, 0), (std::vector<int64_t>{}));
  EXPECT_EQ(MoTopTrials(p, 99).size(), 6u);
  EXPECT_TRUE(MoInTop(p, 2, 3));
  EXPECT_FALSE(MoInTop(p, 4, 3));
}

TEST(MoRungs, TheCutRankIsSplitByHypervolumeNotByTheExtremes) {
  // One front: 10 (0, 10), 11 (5, 5), 12 (10, 0). The reference is the nadir (0, 0) less 10% of
  // the ranges: (-1, -1). Boxes: 11, 36, 11: the balanced trial first, where crowding distance
  // would take the two ends. Then both ends add 11 - 6 = 5: the lower trial number.
  const std::vector<RungPoint> p{{12, {10, 0}}, {11, {5, 5}}, {10, {0, 10}}};
  EXPECT_EQ(MoTopTrials(p, 1), (std::vector<int64_t>{11}));
  EXPECT_EQ(MoTopTrials(p, 2), (std::vector<int64_t>{11, 10}));
  EXPECT_EQ(MoTopTrials(p, 3), (std::vector<int64_t>{10, 11, 12}));  // whole: trial order
}

TEST(MoRungs, PicksAfterTheFirstAreByVolumeAdded) {
  // Reference (-1, -1) again (nadir (0, 0), ranges 10). Boxes: 1: 11 * 1, 2: 9 * 7, 3: 7 * 9,
  // 4: 1 * 11: 2 and 3 tie, 2 goes first. Then 3 adds 63 - 7 * 7 = 14, 1 adds 11 - 9 * 1 = 2
  // and 4 adds 11 - 1 * 7 = 4: 3. Then 1 adds 11 - 9 and 4 adds 11 - 9: 1, the lower number.
  const std::vector<RungPoint> p{{1, {10, 0}}, {2, {8, 6}}, {3, {6, 8}}, {4, {0, 10}}};
  EXPECT_EQ(MoTopTrials(p, 2), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(MoTopTrials(p, 3), (std::vector<int64_t>{2, 3, 1}));
}

TEST(MoRungs, NonFiniteValuesRankLast) {
  const std::vector<RungPoint> p{{1, {NAN, 9}}, {2, {0, 0}}, {3, {-INFINITY, 1}}, {4, {1, 1}}};
  EXPECT_EQ(MoTopTrials(p, 2), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(MoTopTrials(p, 3), (std::vector<int64_t>{4, 2, 1}));
}

TEST(MoRungs, PromotionAndStoppingCountsFollowAsha) {
  std::vector<RungPoint> p;
  for (int64_t t = 0; t < 8; ++t) p.push_back({t, {static_cast<double>(t), 7.0 - t}});
  // Eight on one front, eta 3: two promoted, two survive.
  EXPECT_EQ(MoPromotable(p, 3).size(), 2u);
  EXPECT_EQ(MoPromotable(std::vector<RungPoint>(p.begin(), p.begin() + 2), 3).size(), 0u);
  // Alone at a rung, a trial is never stopped.
  EXPECT_TRUE(MoSurvives({{5, {0, 0}}}, 5, 3));
  EXPECT_FALSE(MoSurvives({{5, {0, 0}}, {6, {1, 1}}}, 5, 3));
  EXPECT_TRUE(MoSurvives({{5, {0, 0}}, {6, {1, 1}}}, 6, 3));
  int survivors = 0;
  for (const auto& x : p) survivors += MoSurvives(p, x.trial, 3);
  EXPECT_EQ(survivors, 2);
}

// Plain greedy, every gain recomputed at every step: what the lazy version must match.
std::vector<int64_t> EagerGreedy(const std::vector<RungPoint>& p, size_t want) {
  Points values;
  for (const auto& x : p) values.push_back(x.values);
  const std::vector<double> ref = ReferencePoint(values);
  std::vector<bool> used(p.size());
  std::vector<int64_t> out;
  Points picked;
  while (out.size() < want) {
    int best = -1;
    double best_gain = -1;
    for (size_t i = 0; i < p.size(); ++i) {
      if (used[i]) continue;
      const double g = HypervolumeGain(p[i].values, picked, ref);
      if (g > best_gain || (g == best_gain && p[i].trial < p[best].trial)) {
        best = static_cast<int>(i);
        best_gain = g;
      }
    }
    used[best] = true;
    out.push_back(p[best].trial);
    picked.push_back(p[best].values);
  }
  return out;
}

TEST(MoRungs, LazyGreedyMatchesEagerGreedyOnOneFront) {
  Rng rng(17);
  for (int dims = 2; dims <= 4; ++dims) {
    for (int round = 0; round < 5; ++round) {
      std::vector<RungPoint> p;
      for (int64_t t = 0; t < 40; ++t) {
        std::vector<double> v(dims);
        double norm = 0;
        for (auto& x : v) {
          x = 0.05 + rng.Uniform();
          norm += x * x;
        }
        for (auto& x : v) x /= std::sqrt(norm);  // on a sphere: one front
        p.push_back({100 - t, v});
      }
      for (size_t k : {1, 5, 13, 39}) {
        EXPECT_EQ(MoTopTrials(p, static_cast<int64_t>(k)), EagerGreedy(p, k))
            << dims << " objectives, round " << round << ", k " << k;
      }
    }
  }
}

TEST(MoRungs, SameSetForThePointsInAnyOrder) {
  Rng rng(23);
  std::vector<RungPoint> p;
  for (int64_t t = 0; t < 60; ++t) {
    // Coarse values: ties in value and equal points.
    p.push_back({t,
                 {static_cast<double>(rng.Below(5)), static_cast<double>(rng.Below(5)),
                  static_cast<double>(rng.Below(5))}});
  }
  const std::vector<int64_t> top = MoTopTrials(p, 20);
  for (int round = 0; round < 5; ++round) {
    for (size_t i = p.size() - 1; i > 0; --i) std::swap(p[i], p[rng.Below(i + 1)]);
    EXPECT_EQ(MoTopTrials(p, 20), top);
  }
}

// Plain greedy over indices with the general gain, every gain recomputed at every step: what
// GreedyPicks, lazy and with its two-objective shortcut, must pick, in the same order.
std::vector<int> EagerPicks(const Points& values, const std::vector<int64_t>& trials,
                            const std::vector<int>& front, size_t want,
                            const std::vector<double>& ref) {
  std::vector<int> picks, left = front;
  Points picked;
  while (picks.size() < want && !left.empty()) {
    size_t best = 0;
    double best_gain = -1;
    for (size_t j = 0; j < left.size(); ++j) {
      const double g = HypervolumeGain(values[left[j]], picked, ref);
      if (g > best_gain || (g == best_gain && trials[left[j]] < trials[left[best]])) {
        best = j;
        best_gain = g;
      }
    }
    picks.push_back(left[best]);
    picked.push_back(values[left[best]]);
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return picks;
}

TEST(MoRungs, TwoObjectivePicksAreTheEagerGeneralPicks) {
  Rng rng(31);
  for (int round = 0; round < 300; ++round) {
    const int n = 1 + static_cast<int>(rng.Below(60));
    Points values;
    std::vector<int64_t> trials;
    std::vector<int> front;
    const int shape = round % 4;
    for (int i = 0; i < n; ++i) {
      double a = rng.Uniform(), b = 0;
      if (shape == 0) b = 1 - a;                             // a line: gains tie often
      if (shape == 1) b = std::sqrt(1 - a * a);              // convex
      if (shape == 2) b = 1 - std::sqrt(a);                  // concave
      if (shape == 3) a = std::floor(a * 6) / 6, b = 1 - a;  // coarse: equal points
      values.push_back({a, b});
      trials.push_back(i);
      front.push_back(i);
    }
    for (size_t i = trials.size() - 1; i > 0; --i) std::swap(trials[i], trials[rng.Below(i + 1)]);
    // One front's indices, in any order, and a reference from the points or a given one.
    for (size_t i = front.size() - 1; i > 0; --i) std::swap(front[i], front[rng.Below(i + 1)]);
    const std::vector<double> ref =
        round % 3 == 0 ? std::vector<double>{-0.3, -1e-3} : ReferencePoint(values);
    for (size_t want : {size_t{1}, size_t{2}, static_cast<size_t>(n / 2), static_cast<size_t>(n),
                        static_cast<size_t>(n + 3)}) {
      ASSERT_EQ(GreedyPicks(values, trials, front, want, ref),
                EagerPicks(values, trials, front, want, ref))
          << "round " << round << ", shape " << shape << ", n " << n << ", want " << want;
    }
  }
}

TEST(MoRungs, PicksFromSomethingNotAFrontUseTheGeneralGain) {
  // A dominated point, a point on the reference and a NaN: the shortcut declines each.
  const std::vector<int64_t> trials{0, 1, 2, 3};
  const std::vector<int> front{0, 1, 2, 3};
  const std::vector<double> ref{0, 0};
  for (const Points& values :
       {Points{{1, 3}, {2, 2}, {3, 1}, {1.5, 1.5}}, Points{{1, 3}, {2, 2}, {3, 1}, {4, 0}},
        Points{{1, 3}, {2, 2}, {3, 1}, {NAN, 0.5}}}) {
    for (size_t want = 1; want <= 4; ++want) {
      EXPECT_EQ(GreedyPicks(values, trials, front, want, ref),
                EagerPicks(values, trials, front, want, ref));
    }
  }
}

}  // namespace mo_rungs_test
}  // namespace sift::search

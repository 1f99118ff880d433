#include "search/multi/rung_ranks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace rung_ranks_test {

// A point on a grid (on a coarse one, ties and equal vectors are common), sometimes NaN-born
// (-infinity) or +infinity, sometimes infeasible with a violation that often ties another's.
TrialPoint RandomPoint(Rng& rng, int64_t trial, size_t objectives, uint64_t grid = 8) {
  TrialPoint p{trial, {}, 0};
  for (size_t m = 0; m < objectives; ++m) {
    const uint64_t roll = rng.Below(40);
    p.values.push_back(roll == 0   ? -INFINITY
                       : roll == 1 ? INFINITY
                                   : static_cast<double>(rng.Below(grid)) - 4.0);
  }
  if (rng.Below(6) == 0) p.violation = rng.Below(3) == 0 ? INFINITY : 0.5 * (1 + rng.Below(3));
  return p;
}

// Every answer of the maintained ranks equals the from-scratch ConstrainedInTop, after every
// point added, for every trial and a spread of k.
void ExpectSameAsFromScratch(uint64_t seed, size_t objectives, int n) {
  Rng rng(seed);
  RungRanks ranks;
  std::vector<TrialPoint> points;
  for (int i = 0; i < n; ++i) {
    // Trial numbers out of order, as reports from parallel trials arrive.
    const auto trial = static_cast<int64_t>((i * 37 + seed) % 1000);
    points.push_back(RandomPoint(rng, trial, objectives));
    ranks.Add(points.back());
    const auto size = static_cast<int64_t>(points.size());
    for (const TrialPoint& p : points) {
      for (int64_t k : {int64_t{0}, int64_t{1}, size / 4, size / 3, size / 2, size - 1, size}) {
        ASSERT_EQ(ranks.InTop(p.trial, k), ConstrainedInTop(points, p.trial, k))
            << "seed " << seed << ", " << objectives << " objectives, " << size << " points, trial "
            << p.trial << ", k " << k;
      }
    }
  }
  EXPECT_EQ(ranks.points().size(), points.size());
  EXPECT_FALSE(ranks.InTop(5000, static_cast<int64_t>(points.size())));  // not at the rung
}

TEST(RungRanks, TwoObjectivesMatchTheFromScratchAnswer) {
  for (uint64_t seed = 1; seed <= 6; ++seed) ExpectSameAsFromScratch(seed, 2, 90);
}

TEST(RungRanks, OneObjectiveMatchesTheFromScratchAnswer) {
  for (uint64_t seed = 31; seed <= 33; ++seed) ExpectSameAsFromScratch(seed, 1, 60);
}

// Two objectives over many fronts: after each of n points, the answer for the point just added
// (whose rank the insertion found) for the top third, as MO-ASHA asks; after every `every`-th
// point, also for every `stride`-th point and each k = size * f.first / f.second of `fractions`.
void ExpectSameOnManyFronts(uint64_t seed, int n, uint64_t grid, int every, size_t stride,
                            const std::vector<std::pair<int64_t, int64_t>>& fractions) {
  Rng rng(seed);
  RungRanks ranks;
  std::vector<TrialPoint> points;
  for (int i = 0; i < n; ++i) {
    points.push_back(RandomPoint(rng, (i * 7919 + 13) % 4000, 2, grid));
    ranks.Add(points.back());
    const auto size = static_cast<int64_t>(points.size());
    const int64_t last = points.back().trial;
    ASSERT_EQ(ranks.InTop(last, size / 3), ConstrainedInTop(points, last, size / 3))
        << "seed " << seed << ", " << size << " points";
    if (i % every != every - 1) continue;
    for (size_t j = points.size() - 1; j < points.size(); j -= stride) {
      const int64_t trial = points[j].trial;
      for (const auto& [num, den] : fractions) {
        const int64_t k = size * num / den;
        ASSERT_EQ(ranks.InTop(trial, k), ConstrainedInTop(points, trial, k))
            << "seed " << seed << ", " << size << " points, trial " << trial << ", k " << k;
      }
    }
  }
}

// A few hundred points over dozens of fronts, so a new point moves runs down many fronts
// (staircase_fronts.h) and fronts outgrow their samples.
TEST(RungRanks, ManyFrontsMatchTheFromScratchAnswer) {
  for (uint64_t seed = 41; seed <= 43; ++seed) {
    ExpectSameOnManyFronts(seed, 400, 60, 1, 23, {{1, 5}, {1, 3}, {1, 2}, {3, 4}});
  }
}

// 1,500 points over a hundred fronts: a tenth defers deep fronts, all of them peels every
// deferred point (StaircaseFronts::Reach), the top third does both as the rung grows.
TEST(RungRanks, DeferredFrontsMatchTheFromScratchAnswer) {
  for (uint64_t seed = 71; seed <= 72; ++seed) {
    ExpectSameOnManyFronts(seed, 1500, 2000, 50, 97, {{1, 10}, {1, 3}, {1, 1}, {1, 2}});
  }
}

TEST(RungRanks, ThreeObjectivesMatchTheFromScratchAnswer) {
  for (uint64_t seed = 11; seed <= 16; ++seed) ExpectSameAsFromScratch(seed, 3, 60);
}

TEST(RungRanks, ClearForgetsEveryPoint) {
  Rng rng(3);
  RungRanks ranks;
  for (int i = 0; i < 20; ++i) ranks.Add(RandomPoint(rng, i, 2));
  ranks.Clear();
  EXPECT_EQ(ranks.size(), 0u);
  EXPECT_FALSE(ranks.InTop(0, 5));
  ranks.Add({0, {1.0, 1.0}, 0});
  ranks.Add({1, {2.0, 2.0}, 0});
  EXPECT_TRUE(ranks.InTop(1, 1));
  EXPECT_FALSE(ranks.InTop(0, 1));
}

// A new point that dominates a chain pushes the whole chain down one rank.
TEST(RungRanks, ANewBestPointPushesTheChainItDominatesDown) {
  RungRanks ranks;
  ranks.Add({0, {3.0, 3.0}, 0});
  ranks.Add({1, {2.0, 2.0}, 0});
  ranks.Add({2, {1.0, 1.0}, 0});
  ranks.Add({3, {0.0, 5.0}, 0});  // rank 0 beside trial 0
  EXPECT_TRUE(ranks.InTop(1, 3));
  ranks.Add({4, {4.0, 4.0}, 0});  // ranks now 1, 2, 3, 0, 0
  EXPECT_FALSE(ranks.InTop(1, 3));
  EXPECT_TRUE(ranks.InTop(0, 3));
}

// A chain of 100 fronts of one point: asking for the top 1 defers all but the first 17 fronts,
// so the worst point, added next, is deferred; asking for the top 18 then peels the fronts it
// sits past, and its rank must be found again, not read from the insertion (front 17, in).
TEST(RungRanks, APointDeferredWhenAddedIsRankedAgainAfterAPeel) {
  RungRanks ranks;
  std::vector<TrialPoint> points;
  for (int i = 0; i < 100; ++i) points.push_back({i, {100.0 - i, 100.0 - i}, 0});
  for (const TrialPoint& p : points) ranks.Add(p);
  EXPECT_TRUE(ranks.InTop(0, 1));
  points.push_back({100, {0.5, 0.5}, 0});
  ranks.Add(points.back());
  EXPECT_FALSE(ConstrainedInTop(points, 100, 18));  // rank 100
  EXPECT_FALSE(ranks.InTop(100, 18));
  EXPECT_TRUE(ranks.InTop(17, 18));
}

// FirstInTop against ConstrainedTopTrials' order: points arrive (out of trial order, some
// non-finite, some infeasible), every trial's state moves at random between ready and not yet,
// and once gone it stays gone and, once told so, must never be asked about again. After each point,
// k moves between a third (MO-ASHA's promotion cut), a tenth, all and more than all; every fifth
// point, k then creeps up from a third while the states move and no point arrives.
void ExpectFirstInTopAsFromScratch(uint64_t seed, size_t objectives, int n, uint64_t grid) {
  Rng rng(seed);
  RungRanks ranks(/*waiting=*/true);
  std::vector<TrialPoint> points;
  std::vector<RungRanks::Wait> state(5000, RungRanks::Wait::kNotYet);
  std::vector<char> told_gone(5000, 0);
  int asked_again = 0, found = 0;
  const auto wait = [&](int64_t trial) {
    const auto t = static_cast<size_t>(trial);
    asked_again += told_gone[t];
    told_gone[t] = state[t] == RungRanks::Wait::kGone;
    return state[t];
  };
  for (int i = 0; i < n; ++i) {
    points.push_back(RandomPoint(rng, (i * 7919 + 13) % 5000, objectives, grid));
    ranks.Add(points.back());
    for (const TrialPoint& p : points) {
      RungRanks::Wait& s = state[static_cast<size_t>(p.trial)];
      if (s == RungRanks::Wait::kGone) continue;
      const uint64_t roll = rng.Below(20);
      s = roll == 0  ? RungRanks::Wait::kGone
          : roll < 8 ? RungRanks::Wait::kReady
                     : RungRanks::Wait::kNotYet;
    }
    const auto size = static_cast<int64_t>(points.size());
    const auto check = [&](int64_t k) {
      std::optional<int64_t> expected;
      for (int64_t trial : ConstrainedTopTrials(points, k)) {
        if (state[static_cast<size_t>(trial)] == RungRanks::Wait::kReady) {
          expected = trial;
          break;
        }
      }
      ASSERT_EQ(ranks.FirstInTop(k, wait), expected)
          << "seed " << seed << ", " << objectives << " objectives, " << size << " points, k " << k;
      found += expected.has_value();
    };
    for (int64_t k : {size / 3, size / 10, size, size + 2}) check(k);
    // No point added: the cut rank's order holds while states move and k creeps up to the end of
    // that rank (ready trials of the rank wait aside meanwhile), every few points.
    if (i % 5 == 0) {
      for (int64_t k = size / 3; k <= size / 3 + 4; ++k) {
        for (const TrialPoint& p : points) {
          RungRanks::Wait& s = state[static_cast<size_t>(p.trial)];
          if (s == RungRanks::Wait::kGone) continue;
          const uint64_t roll = rng.Below(10);
          s = roll < 4 ? RungRanks::Wait::kReady : RungRanks::Wait::kNotYet;
        }
        check(k);
        check(k);
      }
    }
  }
  EXPECT_EQ(asked_again, 0);  // told gone once, never asked again
  EXPECT_GT(found, n);        // not all empty answers
}

TEST(RungRanks, FirstInTopIsTheFirstReadyTrialOfTheTop) {
  for (uint64_t seed = 81; seed <= 84; ++seed) {
    ExpectFirstInTopAsFromScratch(seed, 1, 50, 8);
    ExpectFirstInTopAsFromScratch(seed, 2, 80, 8);
    ExpectFirstInTopAsFromScratch(seed, 3, 60, 8);
  }
}

// Two objectives over many fronts, so the top is cut inside a front with several ready trials
// and deep fronts are deferred and peeled (StaircaseFronts::Reach) between the questions.
TEST(RungRanks, FirstInTopOnManyFronts) {
  for (uint64_t seed = 91; seed <= 92; ++seed) ExpectFirstInTopAsFromScratch(seed, 2, 300, 400);
}

}  // namespace rung_ranks_test
}  // namespace sift::search

#include "search/multi/staircase_fronts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/multi/pareto.h"
#include "search/rng.h"

namespace sift::search {
namespace staircase_fronts_test {

// After every point added: each point's rank is the one a non-dominated sort of them all gives,
// the fronts hold exactly the points of each rank as sorted staircases, and the counts add up.
// `wide`: points near one anti-diagonal, so the fronts are few and long (longer than their
// samples); else uniform on the grid, many fronts.
void ExpectSameAsNonDominatedSort(uint64_t seed, int n, uint64_t grid, bool wide = false) {
  Rng rng(seed);
  StaircaseFronts stairs;
  Points points;
  for (int i = 0; i < n; ++i) {
    // On a coarse grid, ties in one value and equal points are common.
    const auto a = static_cast<double>(rng.Below(grid));
    const auto b = wide ? static_cast<double>(grid) - a + static_cast<double>(rng.Below(4))
                        : static_cast<double>(rng.Below(grid));
    points.push_back({a, b});
    stairs.Add(a, b, i);
    const std::vector<int> ranks = NonDominatedRanks(points);
    const std::string where = "seed " + std::to_string(seed) + ", " + std::to_string(i + 1) +
                              " points, grid " + std::to_string(grid);
    std::vector<int64_t> sizes;
    for (size_t j = 0; j < points.size(); ++j) {
      ASSERT_EQ(stairs.RankOf(points[j][0], points[j][1]), static_cast<size_t>(ranks[j]))
          << where << ", point " << j;
      if (static_cast<size_t>(ranks[j]) >= sizes.size()) sizes.resize(ranks[j] + 1, 0);
      ++sizes[ranks[j]];
    }
    ASSERT_EQ(stairs.FrontCount(), sizes.size()) << where;
    int64_t before = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      ASSERT_EQ(stairs.CountBefore(r), before) << where << ", rank " << r;
      const std::vector<StaircaseFronts::Entry>& front = stairs.Front(r);
      ASSERT_EQ(static_cast<int64_t>(front.size()), sizes[r]) << where << ", rank " << r;
      for (size_t j = 0; j < front.size(); ++j) {
        EXPECT_EQ(ranks[static_cast<size_t>(front[j].trial)], static_cast<int>(r)) << where;
        EXPECT_EQ(points[static_cast<size_t>(front[j].trial)][0], front[j].a) << where;
        EXPECT_EQ(points[static_cast<size_t>(front[j].trial)][1], front[j].b) << where;
        if (j == 0) continue;
        EXPECT_LE(front[j - 1].a, front[j].a) << where << ", rank " << r;
        EXPECT_GE(front[j - 1].b, front[j].b) << where << ", rank " << r;
      }
      before += sizes[r];
    }
    EXPECT_EQ(stairs.CountBefore(sizes.size()), before) << where;
    EXPECT_EQ(stairs.size(), before) << where;
  }
}

TEST(StaircaseFronts, RanksMatchANonDominatedSortWithManyTies) {
  for (uint64_t seed = 1; seed <= 8; ++seed) ExpectSameAsNonDominatedSort(seed, 120, 6);
}

TEST(StaircaseFronts, RanksMatchANonDominatedSortOnAFinerGrid) {
  for (uint64_t seed = 21; seed <= 23; ++seed) ExpectSameAsNonDominatedSort(seed, 400, 500);
}

TEST(StaircaseFronts, RanksMatchANonDominatedSortWithLongFronts) {
  for (uint64_t seed = 31; seed <= 33; ++seed) ExpectSameAsNonDominatedSort(seed, 300, 200, true);
}

// A point dominating a chain pushes it down one front at a time, to a new last front.
// LastChanged: after each point, every exact front above the new point's rank or below the last
// changed one holds the same points as before, and that last one (when it existed) does not.
TEST(StaircaseFronts, LastChangedBoundsTheFrontsThatMoved) {
  int moved_past_rank = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed);
    StaircaseFronts stairs;
    for (int i = 0; i < 300; ++i) {
      std::vector<std::vector<StaircaseFronts::Entry>> old;
      for (size_t r = 0; r < stairs.FrontCount(); ++r) old.push_back(stairs.Front(r));
      const auto a = static_cast<double>(rng.Below(seed % 2 ? 8 : 400));
      const auto b = static_cast<double>(rng.Below(seed % 2 ? 8 : 400));
      const size_t rank = stairs.Add(a, b, i);
      const size_t last = stairs.LastChanged();
      ASSERT_GE(last, rank);
      moved_past_rank += last > rank;
      const auto same = [](const std::vector<StaircaseFronts::Entry>& x,
                           const std::vector<StaircaseFronts::Entry>& y) {
        if (x.size() != y.size()) return false;
        for (size_t j = 0; j < x.size(); ++j) {
          if (x[j].a != y[j].a || x[j].b != y[j].b || x[j].trial != y[j].trial) return false;
        }
        return true;
      };
      for (size_t r = 0; r < old.size(); ++r) {
        const bool changed = !same(old[r], stairs.Front(r));
        if (r < rank || r > last) {
          EXPECT_FALSE(changed) << "seed " << seed << ", point " << i << ", front " << r;
        } else if (r == last) {
          EXPECT_TRUE(changed) << "seed " << seed << ", point " << i << ", front " << r;
        }
      }
    }
  }
  EXPECT_GT(moved_past_rank, 100);
}

TEST(StaircaseFronts, ANewBestPointPushesEveryFrontDown) {
  StaircaseFronts stairs;
  stairs.Add(1, 1, 0);
  stairs.Add(2, 2, 1);
  stairs.Add(0, 5, 2);  // beside (2, 2)
  stairs.Add(3, 3, 3);
  ASSERT_EQ(stairs.FrontCount(), 3u);
  EXPECT_EQ(stairs.RankOf(0, 5), 0u);
  EXPECT_EQ(stairs.RankOf(1, 1), 2u);
  stairs.Add(4, 4, 4);
  EXPECT_EQ(stairs.FrontCount(), 4u);
  EXPECT_EQ(stairs.RankOf(1, 1), 3u);
  EXPECT_EQ(stairs.RankOf(0, 5), 0u);
  EXPECT_EQ(stairs.CountBefore(3), 4);
  stairs.Add(4, 4, 5);  // a copy shares its rank and moves nothing
  EXPECT_EQ(stairs.Front(0).size(), 3u);
  EXPECT_EQ(stairs.RankOf(1, 1), 3u);
  stairs.Clear();
  EXPECT_EQ(stairs.FrontCount(), 0u);
  EXPECT_EQ(stairs.RankOf(1, 1), 0u);
}

// A point dominating a run of one long front moves exactly that run, whatever its length and
// place (Add finds the run's end by galloping from its start: every step size is crossed here).
TEST(StaircaseFronts, ARunOfEveryLengthMovesWhole) {
  constexpr int kLong = 70;
  for (int first = 0; first < kLong; first += 3) {
    for (int last = first + 1; last < kLong; ++last) {
      StaircaseFronts stairs;
      for (int i = 0; i < kLong; ++i) stairs.Add(i, kLong - i, i);
      // (last, kLong - first) dominates (i, kLong - i) for i in [first, last] and no other.
      stairs.Add(last, kLong - first, kLong);
      const std::string where = "run " + std::to_string(first) + ".." + std::to_string(last);
      ASSERT_EQ(stairs.FrontCount(), 2u) << where;
      ASSERT_EQ(stairs.Front(1).size(), static_cast<size_t>(last - first + 1)) << where;
      EXPECT_EQ(stairs.Front(1).front().trial, first) << where;
      EXPECT_EQ(stairs.Front(1).back().trial, last) << where;
      EXPECT_EQ(stairs.Front(0).size(), static_cast<size_t>(kLong - (last - first))) << where;
      EXPECT_EQ(stairs.RankOf(last, kLong - first), 0u) << where;
      if (last + 1 < kLong) {
        EXPECT_EQ(stairs.RankOf(last + 1, kLong - last - 1), 0u) << where;
      }
      if (first > 0) {
        EXPECT_EQ(stairs.RankOf(first - 1, kLong - first + 1), 0u) << where;
      }
    }
  }
}

// Reach(k) after every point, k mostly a rung's top third, now and then a tenth (deeper fronts
// are deferred) or all of them (every deferred point is peeled): the exact fronts are those of
// a non-dominated sort, each deferred point ranks past them all, and they hold the k-th point.
void ExpectLazySameAsNonDominatedSort(uint64_t seed, int n, uint64_t grid) {
  Rng rng(seed);
  StaircaseFronts stairs;
  Points points;
  int peels = 0, defers = 0;
  for (int i = 0; i < n; ++i) {
    const auto a = static_cast<double>(rng.Below(grid));
    const auto b = static_cast<double>(rng.Below(grid));
    points.push_back({a, b});
    const size_t added = stairs.Add(a, b, i);
    const size_t exact_at_add = stairs.FrontCount();
    const auto size = static_cast<int64_t>(points.size());
    const int64_t k = i % 97 == 96 ? size : i % 89 == 88 ? size / 10 : size / 3;
    const size_t exact_before = stairs.FrontCount();
    if (stairs.Reach(k)) ++(stairs.FrontCount() > exact_before ? peels : defers);
    const std::vector<int> ranks = NonDominatedRanks(points);
    const std::string where = "seed " + std::to_string(seed) + ", " + std::to_string(i + 1) +
                              " points, k " + std::to_string(k);
    ASSERT_EQ(added, std::min(static_cast<size_t>(ranks.back()), exact_at_add)) << where;
    const size_t exact = stairs.FrontCount();
    std::vector<int64_t> sizes(exact, 0);
    int64_t deferred = 0;
    for (size_t j = 0; j < points.size(); ++j) {
      const auto rank = static_cast<size_t>(ranks[j]);
      ASSERT_EQ(stairs.RankOf(points[j][0], points[j][1]), std::min(rank, exact))
          << where << ", point " << j;
      if (rank < exact) {
        ++sizes[rank];
      } else {
        ++deferred;
      }
    }
    ASSERT_EQ(static_cast<int64_t>(stairs.Deferred()), deferred) << where;
    ASSERT_TRUE(stairs.CountBefore(exact) >= k || deferred == 0) << where;
    ASSERT_EQ(stairs.size(), size) << where;
    int64_t before = 0;
    for (size_t r = 0; r < exact; ++r) {
      ASSERT_EQ(stairs.CountBefore(r), before) << where << ", rank " << r;
      const std::vector<StaircaseFronts::Entry>& front = stairs.Front(r);
      ASSERT_EQ(static_cast<int64_t>(front.size()), sizes[r]) << where << ", rank " << r;
      for (size_t j = 0; j < front.size(); ++j) {
        EXPECT_EQ(ranks[static_cast<size_t>(front[j].trial)], static_cast<int>(r)) << where;
        if (j == 0) continue;
        EXPECT_LE(front[j - 1].a, front[j].a) << where << ", rank " << r;
        EXPECT_GE(front[j - 1].b, front[j].b) << where << ", rank " << r;
      }
      before += sizes[r];
    }
  }
  EXPECT_GT(peels, 0) << "seed " << seed;
  EXPECT_GT(defers, 0) << "seed " << seed;
}

TEST(StaircaseFronts, DeferredFrontsMatchANonDominatedSortAsTheCutDeepens) {
  for (uint64_t seed = 51; seed <= 53; ++seed) ExpectLazySameAsNonDominatedSort(seed, 1500, 3000);
}

TEST(StaircaseFronts, DeferredFrontsMatchANonDominatedSortWithManyTies) {
  for (uint64_t seed = 61; seed <= 63; ++seed) ExpectLazySameAsNonDominatedSort(seed, 1500, 40);
}

}  // namespace staircase_fronts_test
}  // namespace sift::search

#include "search/multi/mo_median.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "search/median_scheduler.h"
#include "search/rng.h"

namespace sift::search {
namespace mo_median_test {

TEST(MoMedian, MedianPointIsEachObjectivesMedian) {
  EXPECT_EQ(MedianPoint({{1, 5}, {3, 3}, {5, 1}}), (std::vector<double>{3, 3}));
  EXPECT_EQ(MedianPoint({{0, 0}, {2, 4}}), (std::vector<double>{1, 2}));  // even: the mean
  EXPECT_EQ(MedianPoint({{7, -1}}), (std::vector<double>{7, -1}));
  EXPECT_TRUE(MedianPoint({}).empty());
}

TEST(MoMedian, StopsOnlyWhatTheMedianDominates) {
  const Points others{{1, 5}, {3, 3}, {5, 1}};  // median (3, 3)
  EXPECT_TRUE(DominatedByMedian({2, 2}, others));
  EXPECT_TRUE(DominatedByMedian({3, 2}, others));   // equal in one, behind in the other
  EXPECT_FALSE(DominatedByMedian({3, 3}, others));  // level with the median
  EXPECT_FALSE(DominatedByMedian({4, 0}, others));  // ahead in one objective
  EXPECT_FALSE(DominatedByMedian({0, 0}, {}));
  // Grace: behind by 0.5 everywhere stops under a grace of 0.4, not 0.6.
  EXPECT_TRUE(DominatedByMedian({2.5, 2.5}, others, 0.4));
  EXPECT_FALSE(DominatedByMedian({2.5, 2.5}, others, 0.6));
}

TEST(MoMedian, OneObjectiveIsTheSingleObjectiveMedianRule) {
  Rng rng(31);
  for (int round = 0; round < 200; ++round) {
    Points others;
    std::vector<double> sorted;
    for (uint64_t i = 0, n = 1 + rng.Below(7); i < n; ++i) {
      others.push_back({static_cast<double>(rng.Below(5))});
      sorted.push_back(others.back()[0]);
    }
    std::sort(sorted.begin(), sorted.end());
    const double mine = static_cast<double>(rng.Below(5)), grace = 0.5 * rng.Below(3);
    // MedianScheduler continues when mine >= median - grace.
    EXPECT_EQ(DominatedByMedian({mine}, others, grace),
              !(mine >= MedianExcluding(sorted, -1) - grace));
  }
}

}  // namespace mo_median_test
}  // namespace sift::search

#include "search/rungs.h"

#include <gtest/gtest.h>

#include <map>

namespace sift::search {
namespace {

TEST(Rungs, LevelsAreGeometricAndStopBelowMax) {
  EXPECT_EQ(RungLevels(1, 27, 3), (std::vector<int64_t>{1, 3, 9}));
  EXPECT_EQ(RungLevels(1, 28, 3), (std::vector<int64_t>{1, 3, 9, 27}));
  EXPECT_EQ(RungLevels(2, 20, 2), (std::vector<int64_t>{2, 4, 8, 16}));
  EXPECT_EQ(RungLevels(1, 27, 3, /*early_stopping_rate=*/2), (std::vector<int64_t>{9}));
  EXPECT_TRUE(RungLevels(1, 1, 3).empty());
  EXPECT_TRUE(RungLevels(5, 5, 3).empty());
}

TEST(Rungs, RungIndex) {
  const std::vector<int64_t> levels{1, 3, 9};
  EXPECT_EQ(RungIndex(levels, 1), 0);
  EXPECT_EQ(RungIndex(levels, 9), 2);
  EXPECT_EQ(RungIndex(levels, 4), -1);
  EXPECT_EQ(RungIndex(levels, 27), -1);
}

TEST(Rungs, PromotionAndSurvivorCounts) {
  // The paper promotes floor(n / eta); stopping keeps at least the best one.
  EXPECT_EQ(PromotableCount(2, 3), 0);
  EXPECT_EQ(PromotableCount(3, 3), 1);
  EXPECT_EQ(PromotableCount(9, 3), 3);
  EXPECT_EQ(SurvivorCount(1, 3), 1);
  EXPECT_EQ(SurvivorCount(5, 3), 1);
  EXPECT_EQ(SurvivorCount(9, 3), 3);
}

TEST(Rungs, HyperbandBracketsFollowTheAllocation) {
  EXPECT_EQ(HyperbandBracketCount(1, 27, 3), 4);
  EXPECT_EQ(HyperbandBracketCount(1, 26, 3), 3);
  EXPECT_EQ(HyperbandBracketCount(1, 1, 3), 1);
  // Weights for B=4, eta=3: ceil(4*27/4)=27, ceil(4*9/3)=12, ceil(4*3/2)=6, ceil(4/1)=4 -> 27:12:6:4.
  std::map<int, int> counts;
  for (int64_t n = 0; n < 49000; ++n) ++counts[HyperbandBracket(n, 4, 3)];
  // Tolerance: 49,000 hashed draws; binomial sd < 110, so +-3% of each share is > 5 sd.
  EXPECT_NEAR(counts[0], 27000, 810);
  EXPECT_NEAR(counts[1], 12000, 360);
  EXPECT_NEAR(counts[2], 6000, 180);
  EXPECT_NEAR(counts[3], 4000, 120);
  EXPECT_EQ(HyperbandBracket(12345, 4, 3), HyperbandBracket(12345, 4, 3));
}

TEST(RungRecord, RanksBestFirstTiesByTrialNumber) {
  RungRecord r;
  r.Add(0, 0.5);
  r.Add(1, 0.9);
  r.Add(2, 0.5);
  r.Add(1, 0.9);  // already there
  ASSERT_EQ(r.size(), 3);
  EXPECT_EQ(r.at(0).trial, 1);
  EXPECT_EQ(r.RankOf(0, 0.5), 1);
  EXPECT_EQ(r.RankOf(2, 0.5), 2);
  EXPECT_EQ(r.RankOf(3, 0.5), -1);
}

}  // namespace
}  // namespace sift::search

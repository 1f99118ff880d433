#include "search/rungs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "search/rng.h"

namespace sift::search {
namespace rungs_test {

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
  // Weights for B=4, eta=3: ceil(4*27/4)=27, ceil(4*9/3)=12, ceil(4*3/2)=6, ceil(4/1)=4 ->
  // 27:12:6:4.
  std::map<int, int> counts;
  for (int64_t n = 0; n < 49000; ++n) ++counts[HyperbandBracket(n, 4, 3)];
  // Tolerance: 49,000 hashed draws; binomial sd < 110, so +-3% of each share is > 5 sd.
  EXPECT_NEAR(counts[0], 27000, 810);
  EXPECT_NEAR(counts[1], 12000, 360);
  EXPECT_NEAR(counts[2], 6000, 180);
  EXPECT_NEAR(counts[3], 4000, 120);
  EXPECT_EQ(HyperbandBracket(12345, 4, 3), HyperbandBracket(12345, 4, 3));
}

TEST(RungRecord, TopKBestFirstTiesByTrialNumber) {
  RungRecord r(/*eta=*/2);
  r.Add(0, 0.5);
  r.Add(1, 0.9);
  r.Add(2, 0.5);
  r.Add(1, 0.9);  // already there
  ASSERT_EQ(r.size(), 3);
  ASSERT_EQ(r.top_count(), 1);
  EXPECT_EQ(r.Cutoff().trial, 1);
  EXPECT_TRUE(r.InTop(1, 0.9));
  EXPECT_FALSE(r.InTop(0, 0.5));
  EXPECT_FALSE(r.InTop(1, 0.8));   // recorded with another score
  EXPECT_FALSE(r.InTop(3, 0.95));  // not recorded
  r.Add(3, 0.5);  // n = 4: the top 2 are t1 and t0 (tie with t2, t3: the lower number)
  EXPECT_EQ(r.Cutoff().trial, 0);
  EXPECT_TRUE(r.InTop(0, 0.5));
  EXPECT_FALSE(r.InTop(2, 0.5));
}

TEST(RungRecord, HeapsAgreeWithASortedRecomputation) {
  // Random scores with ties and NaNs (ranked last), trials added out of order and twice: after
  // every insertion, the top k and the cutoff equal those of the entries sorted from scratch.
  Rng rng(12);
  for (const int64_t eta : {2, 3, 4}) {
    for (const bool at_least_one : {false, true}) {
      RungRecord r(eta, at_least_one);
      std::vector<RungRecord::Entry> all;
      std::vector<char> added(400, 0);
      for (int i = 0; i < 600; ++i) {
        const auto trial = static_cast<int64_t>(rng.Below(400));
        const uint64_t kind = rng.Below(20);
        const double score = kind == 0 ? NAN : std::round(rng.Uniform() * 30) / 30;
        r.Add(trial, score);
        if (!added[static_cast<size_t>(trial)]) {
          added[static_cast<size_t>(trial)] = 1;
          all.push_back({RungRecord::Orderable(score), trial});
        }
        std::vector<RungRecord::Entry> sorted = all;
        std::sort(sorted.begin(), sorted.end(), RungRecord::Better);
        const auto n = static_cast<int64_t>(sorted.size());
        const int64_t k = at_least_one ? SurvivorCount(n, eta) : PromotableCount(n, eta);
        ASSERT_EQ(r.size(), n);
        ASSERT_EQ(r.top_count(), k);
        if (k > 0) {
          EXPECT_EQ(r.Cutoff().trial, sorted[static_cast<size_t>(k - 1)].trial);
        }
        for (int64_t j = 0; j < n; ++j) {
          const RungRecord::Entry& e = sorted[static_cast<size_t>(j)];
          ASSERT_EQ(r.InTop(e.trial, e.score), j < k) << "rank " << j;
        }
      }
    }
  }
}

}  // namespace rungs_test
}  // namespace sift::search

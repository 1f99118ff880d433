#include "search/curve_values.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace sift::search {
namespace curve_values_test {

// CurveValues replaced std::map<int64_t, double> in TrialView: it must answer every question a
// map did, the same way, whatever order the values come in.
TEST(CurveValuesTest, AnswersAsAMapDoesForAnyInsertionOrder) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::map<int64_t, double> want;
    CurveValues got;
    for (int op = 0; op < 40; ++op) {
      const int64_t r = static_cast<int64_t>(rng() % 20) + 1;
      if (rng() % 5 == 0) {
        ASSERT_EQ(got.erase(r), want.erase(r));
      } else {
        const double v = static_cast<double>(rng() % 1000) / 7;
        got[r] = v;
        want[r] = v;
      }
      ASSERT_EQ(got.size(), want.size());
      ASSERT_TRUE(std::equal(
          got.begin(), got.end(), want.begin(), want.end(),
          [](const auto& a, const auto& b) { return a.first == b.first && a.second == b.second; }));
      for (int64_t k = 0; k <= 21; ++k) {
        ASSERT_EQ(got.count(k), want.count(k));
        const auto ub = got.upper_bound(k);
        const auto wub = want.upper_bound(k);
        ASSERT_EQ(ub == got.end(), wub == want.end());
        if (ub != got.end()) {
          ASSERT_EQ(ub->first, wub->first);
        }
      }
      if (!want.empty()) {
        ASSERT_EQ(got.rbegin()->first, want.rbegin()->first);
      }
    }
  }
}

TEST(CurveValuesTest, AtNamesAMissingResource) {
  CurveValues c{{1, 0.5}, {3, 0.7}};
  EXPECT_EQ(c.at(3), 0.7);
  EXPECT_THROW(c.at(2), std::out_of_range);
  EXPECT_EQ(c.find(2), c.end());
  c.shrink_to_fit();
  EXPECT_EQ(c, (CurveValues{{3, 0.7}, {1, 0.5}}));
}

}  // namespace curve_values_test
}  // namespace sift::search

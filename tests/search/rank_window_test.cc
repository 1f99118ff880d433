#include "search/rank_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace rank_window_test {

struct Item {
  double value;
  int64_t id;
  bool operator<(const Item& o) const { return value < o.value || (value == o.value && id < o.id); }
  bool operator==(const Item& o) const { return value == o.value && id == o.id; }
};

// Value streams the window must follow: steady (the walk of the focus has no drift), trending
// (the focus walks out of the window again and again), sorted both ways (every entry lands at
// one end), two far-apart modes, and heavy ties.
double Stream(const std::string& kind, int64_t i, Rng& rng) {
  const auto x = static_cast<double>(i);
  if (kind == "steady") return rng.Normal();
  if (kind == "trend up") return 0.01 * x + rng.Normal();
  if (kind == "trend down") return -0.01 * x + rng.Normal();
  if (kind == "ascending") return x;
  if (kind == "descending") return -x;
  if (kind == "two modes") return (rng.Below(2) == 0 ? -100.0 : 100.0) + rng.Uniform();
  return std::round(rng.Uniform() * 4);  // "ties": five values, ordered by id
}

// The focus as ASHA's promotion rung (k = n / 3: the k-th best is rank n - k), its stopping
// rung (k at least 1), the median, and both ends.
int64_t Focus(int focus, int64_t n) {
  switch (focus) {
    case 0:
      return n - n / 3;
    case 1:
      return n - std::max<int64_t>(1, n / 4);
    case 2:
      return n / 2;
    case 3:
      return 0;
    default:
      return n - 1;
  }
}

TEST(RankWindow, ReadsWhatASortedCopyHoldsAtEveryRankNearTheFocus) {
  for (const std::string kind :
       {"steady", "trend up", "trend down", "ascending", "descending", "two modes", "ties"}) {
    for (int focus = 0; focus < 5; ++focus) {
      Rng rng(static_cast<uint64_t>(focus) * 31 + kind.size());
      RankWindow<Item, std::less<Item>> w;
      std::vector<Item> sorted;
      for (int64_t i = 0; i < 2500; ++i) {
        const Item e{Stream(kind, i, rng), static_cast<int64_t>(rng.Below(1u << 30))};
        sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), e), e);
        const auto n = static_cast<int64_t>(sorted.size());
        const int64_t f = Focus(focus, n);
        w.Add(e, f);
        ASSERT_EQ(w.size(), n);
        for (int64_t r = std::max<int64_t>(0, f - w.kReach);
             r <= std::min<int64_t>(n - 1, f + w.kReach); ++r) {
          ASSERT_EQ(w.At(r), sorted[static_cast<size_t>(r)])
              << kind << ", focus " << focus << ", n " << n << ", rank " << r;
        }
      }
    }
  }
}

TEST(RankWindow, ClearStartsAfresh) {
  RankWindow<Item, std::less<Item>> w;
  for (int64_t i = 0; i < 200; ++i) w.Add({static_cast<double>(i), i}, (i + 1) / 2);
  w.Clear();
  EXPECT_EQ(w.size(), 0);
  w.Add({5.0, 1}, 0);
  w.Add({3.0, 2}, 1);
  EXPECT_EQ(w.At(0), (Item{3.0, 2}));
  EXPECT_EQ(w.At(1), (Item{5.0, 1}));
}

}  // namespace rank_window_test
}  // namespace sift::search

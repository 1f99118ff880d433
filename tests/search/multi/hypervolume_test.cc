#include "search/multi/hypervolume.h"

#include <gtest/gtest.h>

#include <cmath>

#include "search/rng.h"

namespace sift::search {
namespace hypervolume_test {

// Inclusion-exclusion over every subset: the union of boxes [ref, p] exactly, as the sum of
// signed intersections (an intersection of boxes is the box of their componentwise minimum).
double BruteForce(const Points& p, const std::vector<double>& ref) {
  double total = 0;
  for (uint32_t mask = 1; mask < (1u << p.size()); ++mask) {
    std::vector<double> corner(ref.size(), INFINITY);
    int bits = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (!(mask >> i & 1)) continue;
      ++bits;
      for (size_t m = 0; m < ref.size(); ++m) corner[m] = std::min(corner[m], p[i][m]);
    }
    double vol = 1;
    for (size_t m = 0; m < ref.size(); ++m) vol *= std::max(0.0, corner[m] - ref[m]);
    total += bits % 2 ? vol : -vol;
  }
  return total;
}

Points RandomPoints(Rng& rng, int n, int dims) {
  Points p(n, std::vector<double>(dims));
  for (auto& x : p) {
    for (auto& v : x) v = rng.Uniform();
  }
  return p;
}

// n points on the positive unit sphere's octant in `dims` objectives: all mutually
// non-dominated, the hard case (no point can be dropped).
Points SpherePoints(Rng& rng, int n, int dims) {
  Points p(n, std::vector<double>(dims));
  for (auto& x : p) {
    double norm = 0;
    for (auto& v : x) {
      v = 0.05 + rng.Uniform();
      norm += v * v;
    }
    for (auto& v : x) v /= std::sqrt(norm);
  }
  return p;
}

TEST(Hypervolume, BoxesByHand) {
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 1}}, {0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 2}, {2, 1}}, {0, 0}), 3.0);
  EXPECT_DOUBLE_EQ(Hypervolume({{3}, {5}}, {1}), 4.0);
  // Three boxes of volume 2 meeting pairwise and all together in the unit cube: 6 - 3 + 1.
  EXPECT_DOUBLE_EQ(Hypervolume({{2, 1, 1}, {1, 2, 1}, {1, 1, 2}}, {0, 0, 0}), 4.0);
  // The same in four objectives: 4 * 2 - 6 + 4 - 1.
  EXPECT_DOUBLE_EQ(
      Hypervolume({{2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}}, {0, 0, 0, 0}), 5.0);
}

TEST(Hypervolume, PointsNotAboveTheReferenceAddNothing) {
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 1}, {0, 5}, {-1, 9}}, {0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 1, 1}, {2, 0, 2}}, {0, 0, 0}), 1.0);
  EXPECT_EQ(Hypervolume({}, {0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 1}, {INFINITY, 2}, {NAN, 3}}, {0, 0}), 1.0);
  // Dominated and repeated points change nothing.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 2}, {2, 1}, {1, 1}, {1, 2}}, {0, 0}), 3.0);
  EXPECT_DOUBLE_EQ(Hypervolume({{2, 1, 1}, {1, 1, 1}, {2, 1, 1}}, {0, 0, 0}), 2.0);
}

TEST(Hypervolume, Zdt1FrontApproachesTwoThirds) {
  // ZDT1's front f2 = 1 - sqrt(f1) (both minimized) dominates 2/3 of the unit square with
  // reference (1, 1). n samples make a staircase whose area is known exactly.
  const int n = 1001;
  Points p;
  double staircase = 0;
  for (int i = 0; i < n; ++i) {
    const double f1 = static_cast<double>(i) / (n - 1);
    const double f2 = 1 - std::sqrt(f1);
    p.push_back(Oriented({f1, f2}, {Direction::kMinimize, Direction::kMinimize}));
    const double next = i + 1 < n ? static_cast<double>(i + 1) / (n - 1) : 1.0;
    staircase += (next - f1) * (1 - f2);
  }
  const double hv = Hypervolume(p, {-1, -1});
  EXPECT_NEAR(hv, staircase, 1e-12);
  EXPECT_NEAR(hv, 2.0 / 3.0, 1e-3);
  EXPECT_LT(hv, 2.0 / 3.0);
}

TEST(Hypervolume, MatchesInclusionExclusionOnRandomSets) {
  Rng rng(11);
  for (int dims = 2; dims <= 4; ++dims) {
    for (int round = 0; round < 30; ++round) {
      const Points p = RandomPoints(rng, 1 + round % 12, dims);
      const std::vector<double> ref(dims, 0.0);
      EXPECT_NEAR(Hypervolume(p, ref), BruteForce(p, ref), 1e-12)
          << dims << " objectives, round " << round;
    }
  }
}

TEST(Hypervolume, SphereFrontsAgreeWithAGridEstimate) {
  // 200 mutually non-dominated points; the estimate counts the cells of a regular grid whose
  // centre some point dominates. With g cells an axis, the error is at most the volume of the
  // cells the front's surface crosses, about dims / g; the stated tolerance is 3 / g.
  Rng rng(5);
  for (int dims = 3; dims <= 4; ++dims) {
    const Points p = SpherePoints(rng, 200, dims);
    const int g = dims == 3 ? 100 : 30;
    int64_t inside = 0, cells = 1;
    for (int m = 0; m < dims; ++m) cells *= g;
    std::vector<double> c(dims);
    for (int64_t cell = 0; cell < cells; ++cell) {
      int64_t rest = cell;
      for (int m = 0; m < dims; ++m, rest /= g) c[m] = (static_cast<double>(rest % g) + 0.5) / g;
      for (const auto& x : p) {
        if (Dominates(x, c) || x == c) {
          ++inside;
          break;
        }
      }
    }
    const double estimate = static_cast<double>(inside) / static_cast<double>(cells);
    EXPECT_NEAR(Hypervolume(p, std::vector<double>(dims, 0.0)), estimate, 3.0 / g) << dims;
  }
}

TEST(Hypervolume, DoesNotDependOnTheOrderOfPoints) {
  Rng rng(3);
  Points p = SpherePoints(rng, 40, 3);
  const double hv = Hypervolume(p, {0, 0, 0});
  std::reverse(p.begin(), p.end());
  EXPECT_NEAR(Hypervolume(p, {0, 0, 0}), hv, 1e-12);
}

TEST(Hypervolume, ContributionsByHand) {
  // A staircase of three: each owns one unit square.
  EXPECT_EQ(HypervolumeContributions({{1, 3}, {2, 2}, {3, 1}}, {0, 0}),
            (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(HypervolumeContributions({{1, 1}, {2, 2}}, {0, 0}), (std::vector<double>{0, 3}));
  EXPECT_EQ(HypervolumeContributions({{1, 1}, {1, 1}}, {0, 0}), (std::vector<double>{0, 0}));
  // The three unit-cube boxes: each owns its half of the cube that sticks out.
  EXPECT_EQ(HypervolumeContributions({{2, 1, 1}, {1, 2, 1}, {1, 1, 2}}, {0, 0, 0}),
            (std::vector<double>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(HypervolumeGain({2, 2}, {{1, 3}, {3, 1}}, {0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(HypervolumeGain({2, 2}, {}, {0, 0}), 4.0);
  EXPECT_DOUBLE_EQ(HypervolumeGain({-1, 2}, {}, {0, 0}), 0.0);
}

TEST(Hypervolume, ContributionsAreTheVolumeLostWithoutThePoint) {
  Rng rng(13);
  for (int dims = 2; dims <= 4; ++dims) {
    const Points p = RandomPoints(rng, 10, dims);
    const std::vector<double> ref(dims, 0.0);
    const std::vector<double> got = HypervolumeContributions(p, ref);
    const double all = BruteForce(p, ref);
    for (size_t i = 0; i < p.size(); ++i) {
      Points others = p;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
      EXPECT_NEAR(got[i], all - BruteForce(others, ref), 1e-12) << dims << " objectives, " << i;
    }
  }
}

TEST(Hypervolume, ReferencePointIsTheNadirLessAMargin) {
  // Nadir (1, 2), ranges (2, 3).
  const std::vector<double> ref = ReferencePoint({{1, 5}, {3, 2}});
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_DOUBLE_EQ(ref[0], 0.8);
  EXPECT_DOUBLE_EQ(ref[1], 1.7);
  // One point: the margin scales |nadir|, or 1 at zero.
  const std::vector<double> one = ReferencePoint({{2, -4, 0}}, 0.5);
  EXPECT_EQ(one, (std::vector<double>{1, -6, -0.5}));
  // Non-finite values are passed over.
  EXPECT_EQ(ReferencePoint({{-INFINITY, 1}, {1, 1}}, 0.1), (std::vector<double>{0.9, 0.9}));
  EXPECT_TRUE(ReferencePoint({}).empty());
}

}  // namespace hypervolume_test
}  // namespace sift::search

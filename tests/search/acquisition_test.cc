#include "search/bo/acquisition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sift::search {
namespace acquisition_test {

double NaiveEi(double mean, double sigma, double best) {
  const double z = (mean - best) / sigma;
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  return sigma * (phi + z * 0.5 * std::erfc(-z / std::sqrt(2.0)));
}

TEST(LogEi, MatchesLogOfEiWhereRepresentable) {
  // For z in [-25, 6] plain EI is a normal double; the naive formula loses relative accuracy as
  // it cancels (z << 0), so the tolerance grows with |z|: 1e-10 relative near 0, 1e-4 at z=-25.
  for (double z = -25.0; z <= 6.0; z += 0.25) {
    const double ei = NaiveEi(z, 1.0, 0.0);
    if (!(ei > 0)) continue;
    const double tol = z > -5 ? 1e-10 : 1e-4;
    EXPECT_NEAR(LogExpectedImprovement(z, 1.0, 0.0), std::log(ei), tol * std::abs(std::log(ei)))
        << "z=" << z;
  }
  EXPECT_NEAR(LogExpectedImprovement(0.3, 2.0, 1.0), std::log(NaiveEi(0.3, 2.0, 1.0)), 1e-12);
}

TEST(LogEi, FiniteAndMonotoneFarInTheTail) {
  double prev = LogH(-1.0);
  for (double z = -2.0; z > -1e12; z *= 1.7) {
    const double v = LogH(z);
    ASSERT_TRUE(std::isfinite(v)) << z;
    EXPECT_LT(v, prev) << z;
    prev = v;
  }
  // Asymptotically log h(z) = -z^2/2 - log(2 pi)/2 - 2 log|z|.
  const double z = -1e5;
  const double asymptote = -0.5 * z * z - 0.5 * std::log(2 * M_PI) - 2 * std::log(-z);
  EXPECT_NEAR(LogH(z), asymptote, 1e-14 * std::abs(asymptote));  // ~ a few ulps
}

TEST(LogEi, ErfcxAgreesAcrossItsBranches) {
  EXPECT_NEAR(Erfcx(0.0), 1.0, 1e-15);
  EXPECT_NEAR(Erfcx(25.999) / Erfcx(26.001), 1.0, 1e-4);
  EXPECT_NEAR(Erfcx(1e6) * 1e6 * std::sqrt(M_PI), 1.0, 1e-12);
}

}  // namespace acquisition_test
}  // namespace sift::search

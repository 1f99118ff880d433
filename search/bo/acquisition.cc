#include "search/bo/acquisition.h"

#include <cmath>
#include <limits>

namespace sift::search {
namespace {

// log(1 - exp(x)) for x < 0, accurate at both ends (Maechler 2012).
double Log1mExp(double x) {
  return x > -M_LN2 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x));
}

}  // namespace

double Erfcx(double x) {
  if (x < 26.0) return std::exp(x * x) * std::erfc(x);
  // Asymptotic series; the first omitted term is below 1e-13 relative at x = 26.
  const double r = 1.0 / (x * x);
  return (1.0 - 0.5 * r + 0.75 * r * r - 1.875 * r * r * r) / (x * std::sqrt(M_PI));
}

double LogH(double z) {
  constexpr double kHalfLog2Pi = 0.91893853320467274178;      // log(2 pi) / 2
  constexpr double kHalfLogPiOver2 = 0.22579135264472743236;  // log(pi / 2) / 2
  if (z > -1.0) {
    const double phi = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
    const double cdf = 0.5 * std::erfc(-z / M_SQRT2);
    return std::log(phi + z * cdf);
  }
  // h(z) = phi(z) * (1 - |z| * Phi(z) / phi(z)) and Phi(z) / phi(z) = sqrt(pi/2) erfcx(-z/sqrt2).
  static const double kTail = -1.0 / std::sqrt(std::numeric_limits<double>::epsilon());
  if (z > kTail) {
    return -0.5 * z * z - kHalfLog2Pi +
           Log1mExp(std::log(Erfcx(-z / M_SQRT2) * std::abs(z)) + kHalfLogPiOver2);
  }
  // Beyond ~6.7e7 the bracket is 1/z^2 to double precision.
  return -0.5 * z * z - kHalfLog2Pi - 2.0 * std::log(std::abs(z));
}

double LogExpectedImprovement(double mean, double sigma, double best) {
  return LogH((mean - best) / sigma) + std::log(sigma);
}

}  // namespace sift::search

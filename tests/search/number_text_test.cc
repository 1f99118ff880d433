// G6 writes what printf's "%.6g" writes, for every kind of double a reason can carry.
#include "search/number_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "search/rng.h"

namespace sift::search {
namespace number_text_test {

std::string Printf(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

TEST(NumberText, G6IsPrintfsPercentPointSixG) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0,      -0.0,      1.0,
                                -1.0,     0.5,       0.1,
                                1.0 / 3,  123456,    1234567,
                                999999.5, 9999995,   1e-5,
                                1e-4,     1.5e-7,    2.5e-300,
                                1.7e308,  -3.25e-12, 0.87654321,
                                inf,      -inf,      std::numeric_limits<double>::denorm_min()};
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {  // random magnitudes from 1e-12 to 1e12, both signs
    const double mantissa = rng.Uniform() * 2 - 1;
    values.push_back(mantissa * std::pow(10.0, rng.Uniform() * 24 - 12));
  }
  for (double v : values) EXPECT_EQ(G6(v), Printf(v)) << "value " << v;
  EXPECT_EQ(G6(std::nan("")), "nan");
}

}  // namespace number_text_test
}  // namespace sift::search

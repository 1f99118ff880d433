// Benchmark objectives (minimised) with known optima, as search spaces and functions of Params.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "search/space.h"

namespace sift::bench {

using search::Params;
using search::ParamSpec;
using search::ParamType;
using search::SearchSpace;

struct TestFunction {
  std::string name;
  SearchSpace space;
  std::function<double(const Params&)> f;
  double optimum;
};

inline ParamSpec Float(const std::string& name, double lo, double hi) {
  ParamSpec p;
  p.name = name;
  p.low = lo;
  p.high = hi;
  return p;
}

inline ParamSpec Int(const std::string& name, double lo, double hi) {
  ParamSpec p = Float(name, lo, hi);
  p.type = ParamType::kInt;
  return p;
}

// The categorical "c" over a, b, c of the mixed problems.
inline ParamSpec AbcChoice() {
  ParamSpec c;
  c.name = "c";
  c.type = ParamType::kCategorical;
  c.choices = {std::string("a"), std::string("b"), std::string("c")};
  return c;
}

inline double Get(const Params& p, const std::string& k) {
  double v = 0;
  search::AsDouble(p.at(k), &v);
  return v;
}

inline double Branin(double x1, double x2) {
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  const double a = x2 - b * x1 * x1 + c * x1 - 6;
  return a * a + 10 * (1 - t) * std::cos(x1) + 10;
}

inline double Hartmann6(const double* x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                 {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                 {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                 {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
  double s = 0;
  for (int i = 0; i < 4; ++i) {
    double e = 0;
    for (int j = 0; j < 6; ++j) e += a[i][j] * (x[j] - p[i][j]) * (x[j] - p[i][j]);
    s -= alpha[i] * std::exp(-e);
  }
  return s;
}

// The three problems of the quality benchmark; optuna_reference.py defines the same ones.
inline std::vector<TestFunction> QualityFunctions() {
  std::vector<TestFunction> out;
  out.push_back({"branin", SearchSpace({Float("x1", -5, 10), Float("x2", 0, 15)}),
                 [](const Params& p) { return Branin(Get(p, "x1"), Get(p, "x2")); },
                 0.397887357729739});
  std::vector<ParamSpec> h;
  for (int i = 0; i < 6; ++i) h.push_back(Float("x" + std::to_string(i), 0, 1));
  out.push_back({"hartmann6", SearchSpace(h),
                 [](const Params& p) {
                   double x[6];
                   for (int i = 0; i < 6; ++i) x[i] = Get(p, "x" + std::to_string(i));
                   return Hartmann6(x);
                 },
                 -3.32236801141551});
  // Mixed: Branin plus an integer and a categorical penalty; optimum at k=3, c="a".
  out.push_back(
      {"mixed",
       SearchSpace({Float("x1", -5, 10), Float("x2", 0, 15), Int("k", 1, 10), AbcChoice()}),
       [](const Params& p) {
         const std::string& cat = std::get<std::string>(p.at("c"));
         const double pen = cat == "a" ? 0.0 : cat == "b" ? 2.0 : 5.0;
         const double kk = Get(p, "k");
         return Branin(Get(p, "x1"), Get(p, "x2")) + 0.5 * (kk - 3) * (kk - 3) + pen;
       },
       0.397887357729739});
  return out;
}

}  // namespace sift::bench

#include "search/multi/nsga2.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace sift::search {

std::vector<double> CrowdingByRank(const Points& points, const std::vector<int>& ranks) {
  std::vector<double> crowding(points.size(), 0.0);
  for (const std::vector<int>& front : Fronts(ranks)) {
    const std::vector<double> d = CrowdingDistance(points, front);
    for (size_t i = 0; i < front.size(); ++i) crowding[front[i]] = d[i];
  }
  return crowding;
}

bool CrowdedBetter(int a, int b, const std::vector<int>& ranks,
                   const std::vector<double>& crowding) {
  if (ranks[a] != ranks[b]) return ranks[a] < ranks[b];
  if (crowding[a] != crowding[b]) return crowding[a] > crowding[b];
  return a < b;
}

std::vector<int> Nsga2Survivors(const Points& points, const std::vector<int>& ranks, size_t size) {
  std::vector<int> out;
  for (const std::vector<int>& front : Fronts(ranks)) {
    if (out.size() >= size) break;
    if (out.size() + front.size() <= size) {
      out.insert(out.end(), front.begin(), front.end());
      continue;
    }
    const std::vector<double> d = CrowdingDistance(points, front);
    std::vector<size_t> order(front.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return d[x] > d[y] || (d[x] == d[y] && front[x] < front[y]);
    });
    for (size_t i = 0; out.size() < size; ++i) out.push_back(front[order[i]]);
  }
  return out;
}

std::vector<int> TournamentParents(const std::vector<int>& ranks,
                                   const std::vector<double>& crowding, size_t count, Rng& rng) {
  std::vector<int> parents;
  if (ranks.empty()) return parents;
  for (size_t i = 0; i < count; ++i) {
    const int a = static_cast<int>(rng.Below(ranks.size()));
    const int b = static_cast<int>(rng.Below(ranks.size()));
    parents.push_back(CrowdedBetter(b, a, ranks, crowding) ? b : a);
  }
  return parents;
}

namespace {
// The spread factor for one side: how far a child may go given room `room` to the bound.
double SpreadQuantile(double room, double gap, double u, double eta) {
  const double beta = 1 + 2 * room / gap;
  const double alpha = 2 - std::pow(beta, -(eta + 1));
  const double e = 1 / (eta + 1);
  return u <= 1 / alpha ? std::pow(u * alpha, e) : std::pow(1 / (2 - u * alpha), e);
}
}  // namespace

std::pair<double, double> SbxCoordinate(double x1, double x2, double u, double eta) {
  const double lo = std::min(x1, x2), hi = std::max(x1, x2), gap = hi - lo;
  if (gap < 1e-14) return {x1, x2};  // equal parents: nothing to spread
  const double mid = 0.5 * (lo + hi);
  const double c1 = mid - 0.5 * SpreadQuantile(lo, gap, u, eta) * gap;
  const double c2 = mid + 0.5 * SpreadQuantile(1 - hi, gap, u, eta) * gap;
  return {std::clamp(c1, 0.0, 1.0), std::clamp(c2, 0.0, 1.0)};
}

double PolynomialCoordinate(double x, double u, double eta) {
  const double p = eta + 1;
  double delta;
  if (u <= 0.5) {
    // At u = 0, v^(1/p) = 1 - x: the step lands on 0.
    const double v = 2 * u + (1 - 2 * u) * std::pow(1 - x, p);
    delta = std::pow(v, 1 / p) - 1;
  } else {
    const double v = 2 * (1 - u) + 2 * (u - 0.5) * std::pow(x, p);
    delta = 1 - std::pow(v, 1 / p);
  }
  return std::clamp(x + delta, 0.0, 1.0);
}

std::pair<std::vector<double>, std::vector<double>> Nsga2Children(const std::vector<double>& a,
                                                                  const std::vector<double>& b,
                                                                  const Nsga2Variation& v,
                                                                  Rng& rng) {
  std::vector<double> c1 = a, c2 = b;
  const size_t d = a.size();
  if (rng.Uniform() < v.crossover_probability) {
    for (size_t i = 0; i < d; ++i) {
      if (v.uniform_crossover) {
        if (rng.Uniform() < v.swap_probability) std::swap(c1[i], c2[i]);
        continue;
      }
      if (rng.Uniform() >= v.swap_probability) continue;  // this coordinate not crossed
      std::tie(c1[i], c2[i]) = SbxCoordinate(a[i], b[i], rng.Uniform(), v.sbx_eta);
      if (rng.Uniform() < 0.5) std::swap(c1[i], c2[i]);
    }
  }
  const double pm = v.mutation_probability >= 0 ? v.mutation_probability
                                                : 1.0 / static_cast<double>(std::max<size_t>(d, 1));
  for (std::vector<double>* c : {&c1, &c2}) {
    for (double& x : *c) {
      if (rng.Uniform() < pm) x = PolynomialCoordinate(x, rng.Uniform(), v.mutation_eta);
    }
  }
  return {c1, c2};
}

}  // namespace sift::search

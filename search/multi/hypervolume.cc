#include "search/multi/hypervolume.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sift::search {
namespace {

// Points in one flat array, `dims` values each: the recursion makes many small limit sets, and
// one allocation per set instead of one per point keeps it fast.
struct Flat {
  int dims = 0;
  std::vector<double> v;
  size_t size() const { return dims == 0 ? 0 : v.size() / dims; }
  const double* at(size_t i) const { return v.data() + i * dims; }
};

double BoxVolume(const double* p, const std::vector<double>& ref) {
  double vol = 1;
  for (size_t m = 0; m < ref.size(); ++m) vol *= p[m] - ref[m];
  return vol;
}

// Whether a is at least as good as b everywhere (b adds nothing next to a).
bool Covers(const double* a, const double* b, int dims) {
  for (int m = 0; m < dims; ++m) {
    if (a[m] < b[m]) return false;
  }
  return true;
}

double Sweep2(const Flat& s, const std::vector<double>& ref) {
  std::vector<size_t> order(s.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return s.at(a)[0] > s.at(b)[0] || (s.at(a)[0] == s.at(b)[0] && s.at(a)[1] > s.at(b)[1]);
  });
  // By decreasing first objective: each point that raises the second adds a strip.
  double area = 0, top = ref[1];
  for (size_t i : order) {
    const double* p = s.at(i);
    if (p[1] > top) {
      area += (p[0] - ref[0]) * (p[1] - top);
      top = p[1];
    }
  }
  return area;
}

// The points of `s` no other covers (of equal points, the first): sorted by decreasing last
// objective first, a point can only be covered by one before it.
Flat NonDominated(const Flat& s) {
  const int d = s.dims;
  std::vector<size_t> order(s.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Ties (and the rest) by decreasing values in order, so a point precedes those it covers.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double *pa = s.at(a), *pb = s.at(b);
    if (pa[d - 1] != pb[d - 1]) return pa[d - 1] > pb[d - 1];
    return std::lexicographical_compare(pb, pb + d, pa, pa + d) ||
           (std::equal(pa, pa + d, pb) && a < b);
  });
  Flat out{d, {}};
  out.v.reserve(s.v.size());
  for (size_t i : order) {
    const double* p = s.at(i);
    bool covered = false;
    for (size_t k = 0; k < out.size() && !covered; ++k) covered = Covers(out.at(k), p, d);
    if (!covered) out.v.insert(out.v.end(), p, p + d);
  }
  return out;
}

double Wfg(const Flat& s, const std::vector<double>& ref);

// What `p` adds to the points of `s` from index `from` on: its box less their volume clipped to
// that box (the limit set), reduced to its non-dominated points.
double Exclusive(const double* p, const Flat& s, size_t from, const std::vector<double>& ref) {
  const int d = s.dims;
  Flat limit{d, {}};
  limit.v.reserve((s.size() - std::min(from, s.size())) * d);
  for (size_t j = from; j < s.size(); ++j) {
    const double* q = s.at(j);
    for (int m = 0; m < d; ++m) limit.v.push_back(std::min(p[m], q[m]));
  }
  return BoxVolume(p, ref) - Wfg(NonDominated(limit), ref);
}

// `s` holds only points strictly above the reference.
double Wfg(const Flat& s, const std::vector<double>& ref) {
  const size_t n = s.size();
  if (n == 0) return 0;
  if (n == 1) return BoxVolume(s.at(0), ref);
  if (s.dims == 2) return Sweep2(s, ref);
  // Sorted by decreasing last objective (as NonDominated leaves them), the later points' limit
  // sets are small: WFG's ordering.
  double total = 0;
  for (size_t k = 0; k < n; ++k) total += Exclusive(s.at(k), s, k + 1, ref);
  return total;
}

Flat AboveReference(const Points& points, const std::vector<double>& ref) {
  const int d = static_cast<int>(ref.size());
  Flat s{d, {}};
  for (const auto& p : points) {
    bool above = p.size() == ref.size();
    for (int m = 0; m < d && above; ++m) above = p[m] > ref[m] && std::isfinite(p[m]);
    if (above) s.v.insert(s.v.end(), p.begin(), p.end());
  }
  return s;
}

double Volume(const Flat& s, const std::vector<double>& ref) {
  if (s.dims == 0 || s.size() == 0) return 0;
  if (s.dims == 1) {
    double best = ref[0];
    for (double x : s.v) best = std::max(best, x);
    return best - ref[0];
  }
  return Wfg(s.dims == 2 ? s : NonDominated(s), ref);
}

}  // namespace

double Hypervolume(const Points& points, const std::vector<double>& reference) {
  return Volume(AboveReference(points, reference), reference);
}

double HypervolumeGain(const std::vector<double>& point, const Points& set,
                       const std::vector<double>& reference) {
  const Flat p = AboveReference({point}, reference);
  if (p.size() == 0) return 0;
  const Flat s = AboveReference(set, reference);
  Flat limit{p.dims, {}};
  limit.v.reserve(s.v.size());
  for (size_t j = 0; j < s.size(); ++j) {
    for (int m = 0; m < p.dims; ++m) limit.v.push_back(std::min(p.v[m], s.at(j)[m]));
  }
  return std::max(0.0, BoxVolume(p.at(0), reference) - Volume(limit, reference));
}

std::vector<double> HypervolumeContributions(const Points& points,
                                             const std::vector<double>& reference) {
  std::vector<double> out(points.size(), 0.0);
  for (size_t i = 0; i < points.size(); ++i) {
    Points others;
    others.reserve(points.size() - 1);
    for (size_t j = 0; j < points.size(); ++j) {
      if (j != i) others.push_back(points[j]);
    }
    out[i] = HypervolumeGain(points[i], others, reference);
  }
  return out;
}

std::vector<double> ReferencePoint(const Points& points, double margin) {
  if (points.empty()) return {};
  const size_t d = points[0].size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> low(d, inf), high(d, -inf);
  for (const auto& p : points) {
    for (size_t m = 0; m < d && m < p.size(); ++m) {
      if (!std::isfinite(p[m])) continue;
      low[m] = std::min(low[m], p[m]);
      high[m] = std::max(high[m], p[m]);
    }
  }
  std::vector<double> ref(d);
  for (size_t m = 0; m < d; ++m) {
    if (low[m] == inf) return {};  // no finite value in this objective
    double span = high[m] - low[m];
    if (!(span > 0)) span = std::abs(low[m]);
    if (!(span > 0)) span = 1;
    ref[m] = low[m] - margin * span;
  }
  return ref;
}

}  // namespace sift::search

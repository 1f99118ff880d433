#include "search/multi/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sift::search {

std::vector<double> Oriented(const std::vector<double>& values,
                             const std::vector<Direction>& directions) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (std::isnan(v)) {
      out[i] = -std::numeric_limits<double>::infinity();
    } else {
      out[i] = i < directions.size() && directions[i] == Direction::kMinimize ? -v : v;
    }
  }
  return out;
}

bool Dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] < b[i]) return false;
    if (a[i] > b[i]) better = true;
  }
  return better;
}

std::vector<int> NonDominatedRanks(int n, const std::function<bool(int, int)>& dominates) {
  // Deb's bookkeeping: how many dominate each item, and whom each dominates; peel rank by rank.
  std::vector<int> dominated_by_count(n, 0);
  std::vector<std::vector<int>> dominated(n);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (dominates(i, j)) {
        dominated[i].push_back(j);
        ++dominated_by_count[j];
      } else if (dominates(j, i)) {
        dominated[j].push_back(i);
        ++dominated_by_count[i];
      }
    }
  }
  std::vector<int> ranks(n, -1);
  std::vector<int> current;
  for (int i = 0; i < n; ++i) {
    if (dominated_by_count[i] == 0) current.push_back(i);
  }
  for (int rank = 0; !current.empty(); ++rank) {
    std::vector<int> next;
    for (int i : current) {
      ranks[i] = rank;
      for (int j : dominated[i]) {
        if (--dominated_by_count[j] == 0) next.push_back(j);
      }
    }
    current = std::move(next);
  }
  return ranks;
}

namespace {

// Two objectives in O(n log n) (Jensen 2003) instead of O(n^2): the points in decreasing first
// objective, then second. A point joins the first front whose last member does not dominate it:
// every earlier point is at least as good in the first objective and a front's second objective
// only grows, so its last member dominates the point if any member does; and a front that
// dominates it has every front before it dominate it too, so a binary search finds the front.
// At a rung of 10,000 trials that is what keeps MO-ASHA's decision short.
std::vector<int> TwoObjectiveRanks(const Points& points) {
  std::vector<int> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& x = points[a];
    const auto& y = points[b];
    return x[0] > y[0] || (x[0] == y[0] && (x[1] > y[1] || (x[1] == y[1] && a < b)));
  });
  std::vector<int> ranks(points.size()), last;  // last: each front's latest member
  for (int i : order) {
    const auto it = std::partition_point(last.begin(), last.end(),
                                         [&](int l) { return Dominates(points[l], points[i]); });
    ranks[i] = static_cast<int>(it - last.begin());
    if (it == last.end()) {
      last.push_back(i);
    } else {
      *it = i;
    }
  }
  return ranks;
}

}  // namespace

std::vector<int> NonDominatedRanks(const Points& points) {
  const bool two = std::all_of(points.begin(), points.end(), [](const std::vector<double>& p) {
    return p.size() == 2 && !std::isnan(p[0]) && !std::isnan(p[1]);
  });
  if (two) return TwoObjectiveRanks(points);
  return NonDominatedRanks(static_cast<int>(points.size()),
                           [&](int i, int j) { return Dominates(points[i], points[j]); });
}

std::vector<std::vector<int>> Fronts(const std::vector<int>& ranks) {
  std::vector<std::vector<int>> fronts;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0) continue;
    if (static_cast<size_t>(ranks[i]) >= fronts.size()) fronts.resize(ranks[i] + 1);
    fronts[ranks[i]].push_back(static_cast<int>(i));
  }
  return fronts;
}

std::vector<double> CrowdingDistance(const Points& points, const std::vector<int>& front) {
  const size_t n = front.size();
  std::vector<double> distance(n, 0.0);
  if (n == 0) return distance;
  const double inf = std::numeric_limits<double>::infinity();
  const size_t dims = points[front[0]].size();
  std::vector<size_t> order(n);
  for (size_t m = 0; m < dims; ++m) {
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const double va = points[front[a]][m], vb = points[front[b]][m];
      return va < vb || (va == vb && front[a] < front[b]);
    });
    const double low = points[front[order.front()]][m];
    const double high = points[front[order.back()]][m];
    distance[order.front()] = inf;
    distance[order.back()] = inf;
    const double range = high - low;
    if (!(range > 0) || std::isinf(range)) continue;
    for (size_t r = 1; r + 1 < n; ++r) {
      const double gap = points[front[order[r + 1]]][m] - points[front[order[r - 1]]][m];
      distance[order[r]] += gap / range;
    }
  }
  return distance;
}

}  // namespace sift::search

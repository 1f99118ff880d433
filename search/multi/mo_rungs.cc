#include "search/multi/mo_rungs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "search/multi/hypervolume.h"
#include "search/rungs.h"

namespace sift::search {
namespace {

// Two objectives, one front (no point dominates another), every value finite and above `ref`:
// the front sorted by the first value then has the second descending, and the volume a point p
// adds to picks from it is p's box less two strips, set by the pick nearest on each side. So a
// gain is a bisection of the picks, not a sweep of them (a rung's cut front holds hundreds).
// The arithmetic is HypervolumeGain's sweep (hypervolume.cc) step for step, so the bits are the
// same: the picks clipped to p's box are (p0, b) for those right of p, led by the nearest, then
// (a, p1) for those left of it, led by the nearest; only the two leaders add a strip.
class FrontGains2 {
 public:
  // Null when the front does not qualify; then the general gain is used.
  static std::unique_ptr<FrontGains2> For(const Points& values, const std::vector<int>& front,
                                          const std::vector<double>& ref) {
    if (ref.size() != 2) return nullptr;
    std::vector<std::array<double, 2>> sorted;
    for (int i : front) {
      const std::vector<double>& p = values[static_cast<size_t>(i)];
      if (p.size() != 2 || !(p[0] > ref[0] && p[1] > ref[1]) || !std::isfinite(p[0]) ||
          !std::isfinite(p[1])) {
        return nullptr;
      }
      sorted.push_back({p[0], p[1]});
    }
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) {
      const bool equal = sorted[i] == sorted[i - 1];
      if (!equal && !(sorted[i][0] > sorted[i - 1][0] && sorted[i][1] < sorted[i - 1][1])) {
        return nullptr;  // one dominates another: not a front
      }
    }
    return std::unique_ptr<FrontGains2>(new FrontGains2(ref));
  }

  double Gain(const std::vector<double>& p) const {
    const double box = 1 * (p[0] - ref_[0]) * (p[1] - ref_[1]);  // BoxVolume's order
    const auto right =
        std::lower_bound(picked_.begin(), picked_.end(), p[0],
                         [](const std::array<double, 2>& q, double a) { return q[0] < a; });
    double area = 0, top = ref_[1];
    if (right != picked_.end()) {
      area += (p[0] - ref_[0]) * ((*right)[1] - top);
      top = (*right)[1];
    }
    if (right != picked_.begin() && p[1] > top) {
      const std::array<double, 2>& left = *(right - 1);
      area += (left[0] - ref_[0]) * (p[1] - top);
    }
    return std::max(0.0, box - area);
  }

  void Pick(const std::vector<double>& p) {
    const std::array<double, 2> q{p[0], p[1]};
    picked_.insert(std::upper_bound(picked_.begin(), picked_.end(), q), q);
  }

 private:
  explicit FrontGains2(const std::vector<double>& ref) : ref_(ref) {}
  std::vector<double> ref_;
  std::vector<std::array<double, 2>> picked_;  // by the first value
};

}  // namespace

// Lazily: a candidate's last gain bounds its gain now, so one whose fresh gain still beats every
// other bound is the exact greedy pick.
std::vector<int> GreedyPicks(const Points& values, const std::vector<int64_t>& trials,
                             const std::vector<int>& front, size_t want,
                             const std::vector<double>& ref) {
  struct Candidate {
    double bound;
    int index;
  };
  auto better = [&](const Candidate& a, const Candidate& b) {
    return a.bound > b.bound || (a.bound == b.bound && trials[a.index] < trials[b.index]);
  };
  auto worse_first = [&](const Candidate& a, const Candidate& b) { return better(b, a); };
  const std::unique_ptr<FrontGains2> fast = FrontGains2::For(values, front, ref);
  Points picked;  // the general gain's set, when not `fast`
  auto gain = [&](int i) {
    return fast ? fast->Gain(values[i]) : HypervolumeGain(values[i], picked, ref);
  };
  std::vector<Candidate> heap;
  for (int i : front) heap.push_back({gain(i), i});
  std::make_heap(heap.begin(), heap.end(), worse_first);
  std::vector<int> picks;
  while (picks.size() < want && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse_first);
    Candidate c = heap.back();
    heap.pop_back();
    if (!picks.empty()) c.bound = gain(c.index);
    if (heap.empty() || !better(heap.front(), c)) {
      picks.push_back(c.index);
      if (fast) {
        fast->Pick(values[c.index]);
      } else {
        picked.push_back(values[c.index]);
      }
    } else {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), worse_first);
    }
  }
  return picks;
}

std::vector<int64_t> MoTopTrials(const std::vector<RungPoint>& points, int64_t k) {
  const size_t want = static_cast<size_t>(std::clamp<int64_t>(k, 0, points.size()));
  // Trial order first, so nothing below depends on the order the points came in.
  std::vector<const RungPoint*> sorted;
  for (const auto& p : points) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(),
            [](const RungPoint* a, const RungPoint* b) { return a->trial < b->trial; });
  Points values;
  std::vector<int64_t> trials, broken;
  for (const RungPoint* p : sorted) {
    if (AllFinite(p->values)) {
      values.push_back(p->values);
      trials.push_back(p->trial);
    } else {
      broken.push_back(p->trial);
    }
  }
  std::vector<int64_t> top;
  const std::vector<double> ref = ReferencePoint(values);
  for (const std::vector<int>& front : Fronts(NonDominatedRanks(values))) {
    if (top.size() >= want) break;
    if (top.size() + front.size() <= want) {
      for (int i : front) top.push_back(trials[i]);
    } else {
      for (int i : GreedyPicks(values, trials, front, want - top.size(), ref)) {
        top.push_back(trials[i]);
      }
    }
  }
  for (size_t i = 0; top.size() < want && i < broken.size(); ++i) top.push_back(broken[i]);
  return top;
}

bool MoInTop(const std::vector<RungPoint>& points, int64_t trial, int64_t k) {
  const std::vector<int64_t> top = MoTopTrials(points, k);
  return std::find(top.begin(), top.end(), trial) != top.end();
}

std::vector<int64_t> MoPromotable(const std::vector<RungPoint>& points, int64_t eta) {
  if (eta <= 0) return {};
  return MoTopTrials(points, PromotableCount(static_cast<int64_t>(points.size()), eta));
}

bool MoSurvives(const std::vector<RungPoint>& points, int64_t trial, int64_t eta) {
  if (eta <= 0) return true;
  return MoInTop(points, trial, SurvivorCount(static_cast<int64_t>(points.size()), eta));
}

}  // namespace sift::search

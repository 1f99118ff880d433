#include "search/multi/mo_rungs.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/rungs.h"

namespace sift::search {
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
  std::vector<Candidate> heap;
  for (int i : front) heap.push_back({HypervolumeGain(values[i], {}, ref), i});
  std::make_heap(heap.begin(), heap.end(), worse_first);
  std::vector<int> picks;
  Points picked;
  while (picks.size() < want && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse_first);
    Candidate c = heap.back();
    heap.pop_back();
    if (!picked.empty()) c.bound = HypervolumeGain(values[c.index], picked, ref);
    if (heap.empty() || !better(heap.front(), c)) {
      picks.push_back(c.index);
      picked.push_back(values[c.index]);
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

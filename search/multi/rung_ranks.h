// The points recorded at one MO-ASHA rung with their constrained ranks kept up to date as points
// arrive, so "is trial t in the top k" costs one scan for the new point's dominators rather than
// a non-dominated sort of the whole rung at every decision.
//
// Only a cache: InTop answers exactly ConstrainedInTop(points(), trial, k) (objective_vectors.h).
// A point's values never change once recorded, so adding is the only update; the owner clears
// it when its view shrinks (ReportCursor's reset) and re-adds from the view.
//
// The rank of a point is the length of the longest chain of points dominating it (the same as
// peeling fronts). A new point p can only raise the ranks of points it dominates, each by at most
// one: q rises iff p or a dominator of q that rose sits just one rank above q's old rank.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "search/multi/objective_vectors.h"

namespace sift::search {

class RungRanks {
 public:
  void Add(TrialPoint point);
  void Clear();
  const std::vector<TrialPoint>& points() const { return points_; }
  size_t size() const { return points_.size(); }
  // Equals ConstrainedInTop(points(), trial, k).
  bool InTop(int64_t trial, int64_t k) const;

 private:
  void AddFinite(size_t i);

  std::vector<TrialPoint> points_;
  std::unordered_map<int64_t, size_t> index_;  // trial number -> first point of that trial
  std::vector<int64_t> position_;              // per point: its place in finite_, -1 when not there
  std::vector<size_t> finite_;                 // feasible with finite values, in insertion order
  std::vector<double> flat_;                   // their values, one after another
  std::vector<int> ranks_;                     // their ranks
  std::vector<size_t> broken_;                 // feasible with a value that is not finite
  std::vector<size_t> infeasible_;
  std::vector<int64_t> rank_count_;  // finite points per rank
  // Each objective's lowest and highest value over the finite points: ReferencePoint of these
  // two is ReferencePoint of them all, which the cut rank's picks measure from.
  std::vector<double> low_, high_;
};

}  // namespace sift::search

// The points recorded at one MO-ASHA rung with their constrained ranks kept up to date as points
// arrive, so "is trial t in the top k" does not sort the whole rung at every decision. With two
// objectives the fronts are staircases (staircase_fronts.h): O(log n) bisections per front a new
// point moves. With three or more, one scan for the new point's dominators.
//
// Only a cache: InTop answers exactly ConstrainedInTop(points(), trial, k) (objective_vectors.h).
// A point's values never change once recorded, so adding is the only update; the owner clears
// it when its view shrinks (ReportCursor's reset) and re-adds from the view.
//
// In the scan, the rank of a point is the length of the longest chain of points dominating it (the
// same as peeling fronts). A new point p can only raise the ranks of points it dominates, each by
// at most one: q rises iff p or a dominator of q that rose sits just one rank above q's old rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "search/multi/objective_vectors.h"
#include "search/multi/staircase_fronts.h"

namespace sift::search {

class RungRanks {
 public:
  // `waiting`: keep the trials added for FirstInTop (MO-ASHA's promotion variant asks it).
  explicit RungRanks(bool waiting = false) : track_waiting_(waiting) {}

  void Add(TrialPoint point);
  void Clear();
  const std::vector<TrialPoint>& points() const { return points_; }
  size_t size() const { return points_.size(); }
  // Equals ConstrainedInTop(points(), trial, k). Not const: with two objectives it makes the
  // fronts exact down to the k-th point first (StaircaseFronts::Reach).
  bool InTop(int64_t trial, int64_t k);

  // What a trial waiting at the rung is now, as FirstInTop asks.
  enum class Wait { kReady, kNotYet, kGone };
  // NextPromotion's question: the first trial, in ConstrainedTopTrials(points(), k)'s order of
  // selection, that `wait` calls ready; a trial it calls gone is never asked about again. Needs
  // `waiting`. Finite feasible points wait by a lower bound of their rank (ranks only grow as
  // points arrive), so only those that may lie in the top are asked about and ranked again; the
  // rank that is cut costs its greedy picks. Points with a non-finite value or a violation are
  // read only when the top reaches past every finite feasible point.
  std::optional<int64_t> FirstInTop(int64_t k, const std::function<Wait(int64_t)>& wait);

 private:
  void AddFinite(size_t i);
  // The first point of `trial`, -1 when it has none.
  int64_t Find(int64_t trial) const;
  // Finite point `self`'s rank, the number of points in the ranks before it and in its own.
  struct Place {
    size_t rank;
    int64_t before, same;
  };
  Place PlaceOf(size_t self) const;
  // The values and trial numbers of the finite points of rank r.
  void RankMembers(size_t r, Points* values, std::vector<int64_t>* trials) const;
  // The rank of finite point i now: exact, or FrontCount() for a deferred one (a lower bound).
  size_t RankNow(size_t i) const;
  // The cut of the top k finite points: the rank holding the k-th and the count before it.
  std::pair<size_t, int64_t> Cut(int64_t k);
  // FirstInTop among the points that are not finite or not feasible (k counts only them).
  std::optional<int64_t> FirstOfTheRest(int64_t k, const std::function<Wait(int64_t)>& wait);

  // Counts changes to the ranks down to the cut (a point joining one of them, or another cut),
  // and drops the cut rank's order.
  void Touch();

  // A finite feasible point waiting for FirstInTop, keyed by a lower bound of its rank: exact
  // while `checked` equals top_version_.
  static constexpr uint64_t kUnchecked = UINT64_MAX;
  struct Waiting {
    size_t rank;
    int64_t trial;
    size_t point;
    uint64_t checked;
  };
  static bool After(const Waiting& a, const Waiting& b) {  // the heap's order: least on top
    return a.rank > b.rank || (a.rank == b.rank && a.trial > b.trial);
  }
  // A waiting trial of the cut rank found ready, by its place in the cut rank's picks.
  struct Parked {
    size_t pick;
    Waiting w;
  };
  static bool LaterPick(const Parked& a, const Parked& b) { return a.pick > b.pick; }
  // Makes cut_order_ and cut_pick_ those of rank `cut` if they are not valid.
  void CutOrder(size_t cut);
  void Unpark();  // every parked trial back into the heap

  bool track_waiting_;
  std::vector<Waiting> waiting_;      // a heap by After
  std::vector<Parked> parked_;        // a heap by LaterPick: earliest pick on top
  std::vector<char> rest_waits_;      // per point: a point not finite or not feasible that waits
  std::vector<Waiting> aside_;        // FirstInTop's scratch
  std::vector<Parked> parked_aside_;  // FirstInTop's scratch
  size_t cut_rank_ = SIZE_MAX;        // FirstInTop's last cut rank
  uint64_t top_version_ = 0;
  // The trials of the cut rank in the order of the greedy picks of all of them, and each trial's
  // first place in that order (sorted by trial), when valid.
  std::vector<int64_t> cut_order_;
  std::vector<std::pair<int64_t, size_t>> cut_pick_;
  bool cut_order_valid_ = false;

  std::vector<TrialPoint> points_;
  // Trial number -> its first point, -1 when none (a vector: trial numbers count from 0).
  std::vector<int64_t> first_;
  std::vector<int64_t> position_;  // per point: its place in finite_, -1 when not there
  std::vector<size_t> finite_;     // feasible with finite values, in insertion order
  StaircaseFronts stairs_;         // two objectives: their fronts
  // Three or more objectives: their values one after another, and their ranks.
  std::vector<double> flat_;
  std::vector<int> ranks_;
  std::vector<size_t> broken_;  // feasible with a value that is not finite
  std::vector<size_t> infeasible_;
  std::vector<int64_t> rank_count_;  // finite points per rank (three or more objectives)
  // Each objective's lowest and highest value over the finite points: ReferencePoint of these
  // two is ReferencePoint of them all, which the cut rank's picks measure from.
  std::vector<double> low_, high_;
  // The last point added and, with two objectives, its rank: a decision asks about the point
  // just added, whose rank the insertion has found already.
  size_t last_ = 0;
  size_t last_rank_ = 0;
  bool last_known_ = false;  // false once Reach reshaped the fronts after it was found
};

}  // namespace sift::search

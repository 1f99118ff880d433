// The ended points of a study (EndedPoints) kept across asks, with the constrained ranks of the
// best of them kept up to date, so that the constrained top k of every ended trial (what
// multi-objective TPE's good set is) costs what the trials that changed since the last ask
// change, not a non-dominated sort of the whole history at every ask.
//
// Only a cache: Top(k) answers exactly ConstrainedTopTrials(EndedPoints(study), k)
// (objective_vectors.h). Sync looks only at trials new since the last call and at those that were
// not terminal then (EndedPointCursor), and starts over when the view is another study's.
//
// The pool: every feasible point with finite values whose rank is at most depth_, with its rank.
// A rank (the length of the longest chain of dominators) depends only on the points above it,
// which rank lower, so the pool's ranks are exact from the pool alone. A new point raises ranks by
// at most one (what passes depth_ leaves the pool), and a removed one lowers them by at most one,
// so after a removal from the pool it is exact to one rank less deep. When it no longer holds the
// k best it is rebuilt from every point in one pass in lexicographic order (a dominator comes
// before the points it dominates): O(n log d) for d ranks with two objectives (Jensen's fronts,
// as pareto.h), O(n * pool) with more.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "search/multi/objective_vectors.h"

namespace sift::search {

class RankedPoints {
 public:
  // `slack`: ranks the pool holds past the deepest one the top needs (each removal from the pool
  // costs one; when none is left, the next Top rebuilds it). Tests set 0 to rebuild often.
  explicit RankedPoints(int slack = 4) : slack_(slack), lex_(LexOrder{&slots_}) {}
  RankedPoints(const RankedPoints&) = delete;
  RankedPoints& operator=(const RankedPoints&) = delete;

  void Sync(const StudyView& study);
  // How many trials have an ended point.
  size_t size() const { return count_; }
  // Trial `number`'s ended point; null when it has none.
  const TrialPoint* Find(int64_t number) const;
  // ConstrainedTopTrials(EndedPoints(study), k) for the view of the last Sync, in the same order.
  std::vector<int64_t> Top(int64_t k);

  // For tests of the invariant: the pool's (trial, rank) in trial order, and its depth (-1: none).
  std::vector<std::pair<int64_t, int>> Pool() const;
  int depth() const { return depth_; }

 private:
  enum class Group { kFinite, kBroken, kInfeasible };  // feasible with finite values, or not
  struct Slot {
    bool ended = false;
    Group group = Group::kFinite;
    TrialPoint point;
  };
  // Finite points by decreasing values in lexicographic order, ties by trial number.
  struct LexOrder {
    const std::vector<Slot>* slots;
    bool operator()(int64_t a, int64_t b) const;
  };
  struct Member {
    int64_t trial;
    int rank;
  };

  void Reset(const StudyView& study);
  void Add(int64_t number, TrialPoint point);
  void Remove(int64_t number);
  const std::vector<double>& Values(int64_t trial) const {
    return slots_[static_cast<size_t>(trial)].point.values;
  }
  // 1 + the highest rank of a pool member that dominates `v` (0 when none does).
  int RankInPool(const std::vector<double>& v) const;
  void PoolAdd(int64_t trial);
  void PoolRemove(int64_t trial);
  // Drops the members ranked past depth_.
  void Evict();
  // Makes the pool hold at least `want` points (or every finite one): rebuilt deeper if not.
  void EnsurePool(size_t want);
  void Rebuild(int depth);

  int slack_;
  EndedPointCursor cursor_;
  std::vector<int64_t> look_;
  size_t dims_ = 0;
  std::vector<Slot> slots_;  // by trial number
  size_t count_ = 0;
  std::set<int64_t, LexOrder> lex_;                   // the finite points
  std::vector<std::multiset<double>> finite_values_;  // per objective, for ReferencePoint
  std::set<int64_t> broken_;                          // feasible with a value not finite
  std::set<std::pair<double, int64_t>> infeasible_;   // by violation, then trial number
  std::vector<Member> pool_;
  int depth_ = -1;  // -1: no pool, rebuilt when asked
  // Changes with the pool or the broken or infeasible points; with the same k, count of points
  // wanted from the ranks and reference point, Top answers what it last did.
  uint64_t version_ = 1;
  struct LastTop {
    uint64_t version = 0;
    int64_t k = 0;
    size_t want = 0;
    std::vector<double> ref;
    std::vector<int64_t> top;
  };
  LastTop last_top_;
};

}  // namespace sift::search

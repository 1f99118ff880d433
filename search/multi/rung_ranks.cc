#include "search/multi/rung_ranks.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/multi/mo_rungs.h"

namespace sift::search {
namespace {

// One pass over the contiguous values, both directions at once and free of branches (most
// points are incomparable to p): the new point's rank, and the points it dominates. D: the
// number of objectives when fixed at compile time (two, the common case), else 0.
template <size_t D>
int Scan(const double* flat, const int* ranks, size_t f, size_t d, const double* p,
         std::vector<size_t>* dominated) {
  const size_t dims = D > 0 ? D : d;
  int rank = 0;
  for (size_t j = 0; j < f; ++j) {
    const double* q = flat + j * dims;
    bool below = false, above = false;
    for (size_t m = 0; m < dims; ++m) {
      below |= q[m] < p[m];
      above |= q[m] > p[m];
    }
    rank = std::max(rank, above && !below ? ranks[j] + 1 : 0);  // q dominates p
    if (below && !above) dominated->push_back(j);
  }
  return rank;
}

}  // namespace

void RungRanks::Clear() {
  points_.clear();
  index_.clear();
  position_.clear();
  finite_.clear();
  flat_.clear();
  ranks_.clear();
  broken_.clear();
  infeasible_.clear();
  rank_count_.clear();
  low_.clear();
  high_.clear();
}

void RungRanks::Add(TrialPoint point) {
  const size_t i = points_.size();
  index_.emplace(point.trial, i);
  points_.push_back(std::move(point));
  position_.push_back(-1);
  const TrialPoint& p = points_[i];
  if (!p.feasible()) {
    infeasible_.push_back(i);
  } else if (!AllFinite(p.values)) {
    broken_.push_back(i);
  } else {
    AddFinite(i);
  }
}

void RungRanks::AddFinite(size_t i) {
  const std::vector<double>& p = points_[i].values;
  if (finite_.empty()) low_ = high_ = p;
  const size_t d = low_.size(), f = finite_.size();
  // Values are kept contiguous: a rung holds thousands of points, and chasing each point's own
  // vector cost more than comparing them.
  auto dominates = [d](const double* a, const double* b) {
    bool better = false;
    for (size_t m = 0; m < d; ++m) {
      if (a[m] < b[m]) return false;
      better = better || a[m] > b[m];
    }
    return better;
  };
  int rank = 0;
  std::vector<size_t> dominated;  // the points p dominates
  if (d == 2) {
    rank = Scan<2>(flat_.data(), ranks_.data(), f, d, p.data(), &dominated);
  } else {
    rank = Scan<0>(flat_.data(), ranks_.data(), f, d, p.data(), &dominated);
  }
  finite_.push_back(i);
  flat_.insert(flat_.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(d));
  ranks_.push_back(rank);
  position_[i] = static_cast<int64_t>(f);
  for (size_t m = 0; m < d; ++m) {
    low_[m] = std::min(low_[m], p[m]);
    high_[m] = std::max(high_[m], p[m]);
  }
  auto count = [&](int r, int64_t by) {
    if (rank_count_.size() <= static_cast<size_t>(r)) rank_count_.resize(r + 1, 0);
    rank_count_[r] += by;
  };
  count(rank, 1);
  // Lowest old rank first (a counting sort: a rung can hold thousands of ranks): whether q rises
  // depends only on the risen one rank above it.
  std::vector<size_t> start(rank_count_.size() + 1, 0), by_rank(dominated.size());
  for (size_t j : dominated) ++start[static_cast<size_t>(ranks_[j]) + 1];
  for (size_t r = 1; r < start.size(); ++r) start[r] += start[r - 1];
  {
    std::vector<size_t> next(start.begin(), start.end() - 1);
    for (size_t j : dominated) by_rank[next[static_cast<size_t>(ranks_[j])]++] = j;
  }
  std::vector<size_t> risen_above, risen_here;  // risen points of old rank r - 1, and of r
  for (size_t old = 0; old + 1 < start.size(); ++old) {
    risen_above = std::move(risen_here);
    risen_here.clear();
    for (size_t at = start[old]; at < start[old + 1]; ++at) {
      const size_t j = by_rank[at];
      bool rises = rank >= static_cast<int>(old);
      for (size_t s : risen_above) {
        if (rises) break;
        rises = dominates(&flat_[s * d], &flat_[j * d]);
      }
      if (!rises) continue;
      risen_here.push_back(j);
      ++ranks_[j];
      count(static_cast<int>(old), -1);
      count(static_cast<int>(old) + 1, 1);
    }
    if (risen_here.empty() && rank <= static_cast<int>(old)) break;  // nothing below can rise
  }
}

bool RungRanks::InTop(int64_t trial, int64_t k) const {
  const auto found = index_.find(trial);
  if (found == index_.end() || k <= 0) return false;
  const size_t self = found->second;
  const TrialPoint& me = points_[self];
  // The order ConstrainedInTop counts in: feasible finite by rank, feasible broken by trial
  // number, infeasible by violation then trial number.
  const auto feasible = static_cast<int64_t>(finite_.size() + broken_.size());
  if (!me.feasible()) {
    int64_t ahead = 0;
    for (size_t j : infeasible_) {
      const TrialPoint& q = points_[j];
      ahead += q.violation < me.violation || (q.violation == me.violation && q.trial < trial);
    }
    return feasible + ahead < k;
  }
  if (position_[self] < 0) {
    int64_t ahead = 0;
    for (size_t j : broken_) ahead += points_[j].trial < trial;
    return static_cast<int64_t>(finite_.size()) + ahead < k;
  }
  const int r = ranks_[static_cast<size_t>(position_[self])];
  int64_t before = 0;
  for (int i = 0; i < r; ++i) before += rank_count_[i];
  const int64_t same = rank_count_[r];
  if (before + same <= k) return true;
  if (before >= k) return false;
  // Self is in the rank that is cut: MoTopTrials' greedy picks from that rank alone.
  Points front;
  std::vector<int64_t> trials;
  std::vector<int> members;
  for (size_t j = 0; j < finite_.size(); ++j) {
    if (ranks_[j] != r) continue;
    members.push_back(static_cast<int>(front.size()));
    front.push_back(points_[finite_[j]].values);
    trials.push_back(points_[finite_[j]].trial);
  }
  const std::vector<int> picks = GreedyPicks(
      front, trials, members, static_cast<size_t>(k - before), ReferencePoint({low_, high_}));
  return std::any_of(picks.begin(), picks.end(), [&](int i) { return trials[i] == trial; });
}

}  // namespace sift::search

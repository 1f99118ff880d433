#include "search/multi/rung_ranks.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/multi/mo_rungs.h"

namespace sift::search {
namespace {

bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

void RungRanks::Clear() {
  points_.clear();
  index_.clear();
  rank_.clear();
  finite_.clear();
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
  rank_.push_back(-1);
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
  int rank = 0;
  std::vector<std::pair<int, size_t>> dominated;  // (old rank, point)
  for (size_t j : finite_) {
    const std::vector<double>& q = points_[j].values;
    if (Dominates(q, p)) {
      rank = std::max(rank, rank_[j] + 1);
    } else if (Dominates(p, q)) {
      dominated.emplace_back(rank_[j], j);
    }
  }
  finite_.push_back(i);
  if (low_.empty()) low_ = high_ = p;
  for (size_t m = 0; m < p.size() && m < low_.size(); ++m) {
    low_[m] = std::min(low_[m], p[m]);
    high_[m] = std::max(high_[m], p[m]);
  }
  rank_[i] = rank;
  if (rank_count_.size() <= static_cast<size_t>(rank) + 1) rank_count_.resize(rank + 2, 0);
  ++rank_count_[rank];
  // Lowest old rank first: whether q rises depends only on the risen one rank above it.
  std::sort(dominated.begin(), dominated.end());
  std::vector<size_t> risen_above, risen_here;  // risen points of old rank r - 1, and of r
  int level = -1;
  for (const auto& [old, j] : dominated) {
    if (old != level) {
      risen_above = old == level + 1 ? std::move(risen_here) : std::vector<size_t>{};
      risen_here.clear();
      level = old;
    }
    bool rises = rank >= old;
    for (size_t s : risen_above) {
      if (rises) break;
      rises = Dominates(points_[s].values, points_[j].values);
    }
    if (!rises) continue;
    risen_here.push_back(j);
    rank_[j] = old + 1;
    --rank_count_[old];
    if (rank_count_.size() <= static_cast<size_t>(old) + 1) rank_count_.resize(old + 2, 0);
    ++rank_count_[old + 1];
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
  if (rank_[self] < 0) {
    int64_t ahead = 0;
    for (size_t j : broken_) ahead += points_[j].trial < trial;
    return static_cast<int64_t>(finite_.size()) + ahead < k;
  }
  const int r = rank_[self];
  int64_t before = 0;
  for (int i = 0; i < r; ++i) before += rank_count_[i];
  const int64_t same = rank_count_[r];
  if (before + same <= k) return true;
  if (before >= k) return false;
  // Self is in the rank that is cut: MoTopTrials' greedy picks from that rank alone.
  Points front;
  std::vector<int64_t> trials;
  std::vector<int> members;
  for (size_t j : finite_) {
    if (rank_[j] != r) continue;
    members.push_back(static_cast<int>(front.size()));
    front.push_back(points_[j].values);
    trials.push_back(points_[j].trial);
  }
  const std::vector<int> picks = GreedyPicks(
      front, trials, members, static_cast<size_t>(k - before), ReferencePoint({low_, high_}));
  return std::any_of(picks.begin(), picks.end(), [&](int i) { return trials[i] == trial; });
}

}  // namespace sift::search

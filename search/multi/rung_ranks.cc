#include "search/multi/rung_ranks.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/multi/mo_rungs.h"

namespace sift::search {
namespace {

// One pass over the contiguous values, both directions at once and free of branches (most
// points are incomparable to p): the new point's rank, and the points it dominates.
int Scan(const double* flat, const int* ranks, size_t f, size_t dims, const double* p,
         std::vector<size_t>* dominated) {
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
  first_.clear();
  position_.clear();
  finite_.clear();
  flat_.clear();
  ranks_.clear();
  stairs_.Clear();
  broken_.clear();
  infeasible_.clear();
  rank_count_.clear();
  low_.clear();
  high_.clear();
  waiting_.clear();
  parked_.clear();
  rest_waits_.clear();
  cut_rank_ = SIZE_MAX;
  Touch();
}

void RungRanks::Touch() {
  ++top_version_;
  cut_order_valid_ = false;
}

void RungRanks::Add(TrialPoint point) {
  const size_t i = points_.size();
  // Only a trial's first point is ever asked about (Find), so only it waits.
  const bool first = Find(point.trial) < 0;
  const bool waits = track_waiting_ && first;
  if (point.trial >= 0 && first) {
    const auto t = static_cast<size_t>(point.trial);
    if (t >= first_.size()) first_.resize(std::max(t + 1, 2 * first_.size()), -1);
    first_[t] = static_cast<int64_t>(i);
  }
  last_ = i;
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
  if (!track_waiting_) return;
  const bool finite = position_[i] >= 0;
  rest_waits_.push_back(waits && !finite);
  if (!finite) return;
  const size_t rank = low_.size() == 2 ? last_rank_ : static_cast<size_t>(ranks_.back());
  // Only a point joining the cut rank or one above it moves a point of those ranks. With two
  // objectives the fronts say how deep it moved them: when it stopped above the cut, the cut
  // rank kept its points, and with them its order of picks.
  if (rank <= cut_rank_) {
    if (low_.size() == 2 && stairs_.LastChanged() < cut_rank_) {
      ++top_version_;
    } else {
      Touch();
    }
  }
  if (waits) {
    waiting_.push_back({rank, p.trial, i, kUnchecked});
    std::push_heap(waiting_.begin(), waiting_.end(), After);
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
  finite_.push_back(i);
  position_[i] = static_cast<int64_t>(f);
  for (size_t m = 0; m < d; ++m) {
    if (p[m] < low_[m] || p[m] > high_[m]) cut_order_valid_ = false;  // the picks' reference moved
    low_[m] = std::min(low_[m], p[m]);
    high_[m] = std::max(high_[m], p[m]);
  }
  if (d == 2) {
    last_rank_ = stairs_.Add(p[0], p[1], points_[i].trial);
    last_known_ = true;
    return;
  }
  std::vector<size_t> dominated;  // the points p dominates
  const int rank = Scan(flat_.data(), ranks_.data(), f, d, p.data(), &dominated);
  flat_.insert(flat_.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(d));
  ranks_.push_back(rank);
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

int64_t RungRanks::Find(int64_t trial) const {
  if (trial >= 0) {
    const auto t = static_cast<size_t>(trial);
    return t < first_.size() ? first_[t] : -1;
  }
  // Not a trial of a study (those count from 0), but answered all the same.
  const auto it = std::find_if(points_.begin(), points_.end(),
                               [&](const TrialPoint& p) { return p.trial == trial; });
  return it == points_.end() ? -1 : it - points_.begin();
}

bool RungRanks::InTop(int64_t trial, int64_t k) {
  const int64_t found = Find(trial);
  if (found < 0 || k <= 0) return false;
  const auto self = static_cast<size_t>(found);
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
  const bool two = low_.size() == 2;
  if (two && stairs_.Reach(k)) last_known_ = false;
  const Place at = PlaceOf(self);
  // Deferred: past every exact front, so past the k-th point (Reach).
  if (two && at.rank >= stairs_.FrontCount()) return false;
  if (at.before + at.same <= k) return true;
  if (at.before >= k) return false;
  // Self is in the rank that is cut: MoTopTrials' greedy picks from that rank alone.
  Points front;
  std::vector<int64_t> trials;
  RankMembers(at.rank, &front, &trials);
  std::vector<int> members(front.size());
  for (size_t j = 0; j < members.size(); ++j) members[j] = static_cast<int>(j);
  const std::vector<int> picks = GreedyPicks(
      front, trials, members, static_cast<size_t>(k - at.before), ReferencePoint({low_, high_}));
  return std::any_of(picks.begin(), picks.end(), [&](int i) { return trials[i] == trial; });
}

RungRanks::Place RungRanks::PlaceOf(size_t self) const {
  const std::vector<double>& v = points_[self].values;
  if (low_.size() == 2) {
    const size_t r = self == last_ && last_known_ ? last_rank_ : stairs_.RankOf(v[0], v[1]);
    if (r >= stairs_.FrontCount()) return {r, stairs_.CountBefore(r), 0};  // deferred
    return {r, stairs_.CountBefore(r), static_cast<int64_t>(stairs_.Front(r).size())};
  }
  const auto r = static_cast<size_t>(ranks_[static_cast<size_t>(position_[self])]);
  int64_t before = 0;
  for (size_t i = 0; i < r; ++i) before += rank_count_[i];
  return {r, before, rank_count_[r]};
}

void RungRanks::RankMembers(size_t r, Points* values, std::vector<int64_t>* trials) const {
  if (low_.size() == 2) {
    for (const StaircaseFronts::Entry& e : stairs_.Front(r)) {
      values->push_back({e.a, e.b});
      trials->push_back(e.trial);
    }
    return;
  }
  for (size_t j = 0; j < finite_.size(); ++j) {
    if (static_cast<size_t>(ranks_[j]) != r) continue;
    values->push_back(points_[finite_[j]].values);
    trials->push_back(points_[finite_[j]].trial);
  }
}

}  // namespace sift::search

namespace sift::search {

size_t RungRanks::RankNow(size_t i) const {
  const std::vector<double>& v = points_[i].values;
  if (low_.size() == 2) return stairs_.RankOf(v[0], v[1]);
  return static_cast<size_t>(ranks_[static_cast<size_t>(position_[i])]);
}

std::pair<size_t, int64_t> RungRanks::Cut(int64_t k) {
  if (low_.size() == 2) {
    if (stairs_.Reach(k)) last_known_ = false;
    const size_t cut = stairs_.CutFront(k);
    return {cut, stairs_.CountBefore(cut)};
  }
  int64_t before = 0;
  size_t cut = 0;
  while (cut + 1 < rank_count_.size() && before + rank_count_[cut] < k)
    before += rank_count_[cut++];
  return {cut, before};
}

void RungRanks::CutOrder(size_t cut) {
  if (cut_order_valid_) return;
  Points front;
  cut_order_.clear();
  RankMembers(cut, &front, &cut_order_);
  std::vector<int> members(front.size());
  for (size_t j = 0; j < members.size(); ++j) members[j] = static_cast<int>(j);
  const std::vector<int> picks =
      GreedyPicks(front, cut_order_, members, members.size(), ReferencePoint({low_, high_}));
  std::vector<int64_t> order;
  for (int j : picks) order.push_back(cut_order_[static_cast<size_t>(j)]);
  cut_order_ = std::move(order);
  cut_pick_.clear();
  for (size_t j = 0; j < cut_order_.size(); ++j) cut_pick_.push_back({cut_order_[j], j});
  std::sort(cut_pick_.begin(), cut_pick_.end());
  cut_order_valid_ = true;
}

void RungRanks::Unpark() {
  for (const Parked& p : parked_) {
    waiting_.push_back(p.w);
    std::push_heap(waiting_.begin(), waiting_.end(), After);
  }
  parked_.clear();
}

std::optional<int64_t> RungRanks::FirstInTop(int64_t k, const std::function<Wait(int64_t)>& wait) {
  if (k <= 0) return std::nullopt;
  const auto finite = static_cast<int64_t>(finite_.size());
  const int64_t kf = std::min(k, finite);
  std::optional<int64_t> found;
  if (kf > 0) {
    const auto [cut, before] = Cut(kf);
    if (cut != cut_rank_) {
      cut_rank_ = cut;
      Touch();
    }
    const int64_t same =
        low_.size() == 2 ? static_cast<int64_t>(stairs_.Front(cut).size()) : rank_count_[cut];
    const bool whole = before + same <= kf;  // the cut rank fits whole: no picks
    // Parked trials are ready ones of the cut rank, by their place in its picks; they stay out of
    // the heap (which every call would otherwise pop them from and push them back to) while the
    // picks' order holds and the rank is cut.
    if (!cut_order_valid_ || whole) Unpark();
    // Popped by (rank, trial) with the rank made exact first, so the first ready one of a whole
    // rank is the first in the order of selection; ready ones of a cut rank wait for the picks.
    aside_.clear();
    while (!waiting_.empty() && waiting_.front().rank <= cut) {
      std::pop_heap(waiting_.begin(), waiting_.end(), After);
      Waiting w = waiting_.back();
      waiting_.pop_back();
      // Ranked again only when a point has joined the top ranks since it last was.
      const size_t now = w.checked == top_version_ ? w.rank : RankNow(w.point);
      w.checked = top_version_;
      if (now > w.rank) {  // pushed down since: it waits by the rank it has now
        w.rank = now;
        waiting_.push_back(w);
        std::push_heap(waiting_.begin(), waiting_.end(), After);
        continue;
      }
      const Wait state = wait(w.trial);
      if (state == Wait::kGone) continue;
      if (state == Wait::kReady && w.rank == cut && !whole) {
        // The picks for fewer are a prefix of the picks for more (the greedy never looks
        // ahead), so the whole rank's order serves every k that cuts it, until the rank changes.
        CutOrder(cut);
        const auto at = std::lower_bound(cut_pick_.begin(), cut_pick_.end(),
                                         std::pair<int64_t, size_t>{w.trial, 0});
        const bool member = at != cut_pick_.end() && at->first == w.trial;
        parked_.push_back({member ? at->second : SIZE_MAX, w});
        std::push_heap(parked_.begin(), parked_.end(), LaterPick);
        continue;
      }
      aside_.push_back(w);
      if (state == Wait::kReady) {
        found = w.trial;
        break;
      }
    }
    // The first ready one among the picks for kf (every parked trial is of the cut rank, which
    // comes after any rank before it).
    const auto picks = static_cast<size_t>(kf - before);
    parked_aside_.clear();
    while (!found && !parked_.empty() && parked_.front().pick < picks) {
      const Wait state = wait(parked_.front().w.trial);
      if (state == Wait::kReady) {
        found = parked_.front().w.trial;
        break;
      }
      std::pop_heap(parked_.begin(), parked_.end(), LaterPick);
      if (state == Wait::kNotYet) parked_aside_.push_back(parked_.back());
      parked_.pop_back();
    }
    for (const Parked& p : parked_aside_) {
      parked_.push_back(p);
      std::push_heap(parked_.begin(), parked_.end(), LaterPick);
    }
    for (const Waiting& w : aside_) {
      waiting_.push_back(w);
      std::push_heap(waiting_.begin(), waiting_.end(), After);
    }
  }
  if (!found && k > finite) found = FirstOfTheRest(k - finite, wait);
  return found;
}

std::optional<int64_t> RungRanks::FirstOfTheRest(int64_t k,
                                                 const std::function<Wait(int64_t)>& wait) {
  // ConstrainedTopTrials' order past the finite feasible points: feasible ones with a value that
  // is not finite by trial number, then infeasible ones by violation. Rare, so sorted here.
  std::vector<size_t> order(broken_);
  const auto by_trial = [&](size_t a, size_t b) { return points_[a].trial < points_[b].trial; };
  std::sort(order.begin(), order.end(), by_trial);
  std::vector<size_t> infeasible(infeasible_);
  std::sort(infeasible.begin(), infeasible.end(), [&](size_t a, size_t b) {
    const TrialPoint &x = points_[a], &y = points_[b];
    return x.violation < y.violation || (x.violation == y.violation && x.trial < y.trial);
  });
  order.insert(order.end(), infeasible.begin(), infeasible.end());
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(i) < k; ++i) {
    const size_t j = order[i];
    if (!rest_waits_[j]) continue;
    const Wait state = wait(points_[j].trial);
    if (state == Wait::kGone) rest_waits_[j] = 0;
    if (state == Wait::kReady) return points_[j].trial;
  }
  return std::nullopt;
}

}  // namespace sift::search

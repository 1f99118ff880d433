#include "search/multi/ranked_points.h"

#include <algorithm>

#include "search/multi/hypervolume.h"
#include "search/multi/mo_rungs.h"

namespace sift::search {

bool RankedPoints::LexOrder::operator()(int64_t a, int64_t b) const {
  const auto& va = (*slots)[static_cast<size_t>(a)].point.values;
  const auto& vb = (*slots)[static_cast<size_t>(b)].point.values;
  if (va != vb) return std::lexicographical_compare(vb.begin(), vb.end(), va.begin(), va.end());
  return a < b;
}

void RankedPoints::Reset(const StudyView& study) {
  dims_ = ObjectiveCount(study);
  lex_.clear();  // before the slots its order reads
  slots_.clear();
  count_ = 0;
  finite_values_.assign(dims_, {});
  broken_.clear();
  infeasible_.clear();
  pool_.clear();
  depth_ = -1;
  ++version_;
}

void RankedPoints::Sync(const StudyView& study) {
  if (cursor_.Advance(study, look_)) Reset(study);
  if (slots_.size() < study.trials.size()) slots_.resize(study.trials.size());
  for (int64_t number : look_) {
    std::optional<TrialPoint> now = EndedPoint(study, study.trials[static_cast<size_t>(number)]);
    const Slot& slot = slots_[static_cast<size_t>(number)];
    if (!now && !slot.ended) continue;
    if (now && slot.ended && *now == slot.point) continue;
    if (slot.ended) Remove(number);
    if (now) Add(number, std::move(*now));
  }
}

const TrialPoint* RankedPoints::Find(int64_t number) const {
  if (number < 0 || static_cast<size_t>(number) >= slots_.size()) return nullptr;
  const Slot& slot = slots_[static_cast<size_t>(number)];
  return slot.ended ? &slot.point : nullptr;
}

void RankedPoints::Add(int64_t number, TrialPoint point) {
  Slot& slot = slots_[static_cast<size_t>(number)];
  slot.point = std::move(point);
  slot.ended = true;
  ++count_;
  if (!slot.point.feasible()) {
    slot.group = Group::kInfeasible;
    infeasible_.insert({slot.point.violation, number});
    ++version_;
  } else if (!AllFinite(slot.point.values)) {
    slot.group = Group::kBroken;
    broken_.insert(number);
    ++version_;
  } else {
    slot.group = Group::kFinite;
    for (size_t m = 0; m < dims_; ++m) finite_values_[m].insert(slot.point.values[m]);
    lex_.insert(number);
    PoolAdd(number);
  }
}

void RankedPoints::Remove(int64_t number) {
  Slot& slot = slots_[static_cast<size_t>(number)];
  switch (slot.group) {
    case Group::kInfeasible:
      infeasible_.erase({slot.point.violation, number});
      ++version_;
      break;
    case Group::kBroken:
      broken_.erase(number);
      ++version_;
      break;
    case Group::kFinite:
      for (size_t m = 0; m < dims_; ++m) {
        finite_values_[m].erase(finite_values_[m].find(slot.point.values[m]));
      }
      PoolRemove(number);
      lex_.erase(number);  // before its values change
      break;
  }
  slot.ended = false;
  --count_;
}

std::vector<std::pair<int64_t, int>> RankedPoints::Pool() const {
  std::vector<std::pair<int64_t, int>> out;
  for (const Member& m : pool_) out.emplace_back(m.trial, m.rank);
  std::sort(out.begin(), out.end());
  return out;
}

int RankedPoints::RankInPool(const std::vector<double>& v) const {
  int rank = 0;
  for (const Member& m : pool_) {
    if (m.rank >= rank && Dominates(Values(m.trial), v)) rank = m.rank + 1;
  }
  return rank;
}

// The new point's rank from the pool; the members it dominates rise, in order of their old rank
// (a dominator ranks lower), each to one past the highest risen or new dominator if that is more.
void RankedPoints::PoolAdd(int64_t trial) {
  if (depth_ < 0) return;
  const std::vector<double>& v = Values(trial);
  const int rank = RankInPool(v);
  if (rank > depth_) return;
  std::vector<size_t> below;  // members the new point dominates
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (Dominates(v, Values(pool_[i].trial))) below.push_back(i);
  }
  std::sort(below.begin(), below.end(),
            [&](size_t a, size_t b) { return pool_[a].rank < pool_[b].rank; });
  for (size_t j = 0; j < below.size(); ++j) {
    Member& c = pool_[below[j]];
    int risen = std::max(c.rank, rank + 1);
    for (size_t i = 0; i < j; ++i) {
      const Member& d = pool_[below[i]];
      if (d.rank >= risen && Dominates(Values(d.trial), Values(c.trial))) risen = d.rank + 1;
    }
    c.rank = risen;
  }
  pool_.push_back({trial, rank});
  ++version_;
  Evict();
}

// The members the removed point dominated may fall: each is re-ranked from its dominators in the
// pool, in order of old rank so that theirs are final. The pool is then exact one rank less deep.
void RankedPoints::PoolRemove(int64_t trial) {
  const auto it =
      std::find_if(pool_.begin(), pool_.end(), [&](const Member& m) { return m.trial == trial; });
  if (it == pool_.end()) return;
  pool_.erase(it);
  ++version_;
  const std::vector<double>& v = Values(trial);
  std::vector<size_t> below;
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (Dominates(v, Values(pool_[i].trial))) below.push_back(i);
  }
  std::sort(below.begin(), below.end(),
            [&](size_t a, size_t b) { return pool_[a].rank < pool_[b].rank; });
  for (size_t i : below) pool_[i].rank = RankInPool(Values(pool_[i].trial));
  --depth_;
  Evict();
}

void RankedPoints::Evict() {
  ++version_;
  pool_.erase(
      std::remove_if(pool_.begin(), pool_.end(), [&](const Member& m) { return m.rank > depth_; }),
      pool_.end());
}

void RankedPoints::Rebuild(int depth) {
  ++version_;
  pool_.clear();
  depth_ = depth;
  if (dims_ == 2) {
    // Jensen's fronts (pareto.h), the first depth + 1 only: a point joins the first front whose
    // latest member does not dominate it.
    std::vector<int64_t> last;
    for (int64_t t : lex_) {
      const std::vector<double>& v = Values(t);
      const auto it = std::partition_point(last.begin(), last.end(),
                                           [&](int64_t l) { return Dominates(Values(l), v); });
      const int rank = static_cast<int>(it - last.begin());
      if (rank > depth) continue;
      pool_.push_back({t, rank});
      if (it == last.end()) {
        last.push_back(t);
      } else {
        *it = t;
      }
    }
    return;
  }
  for (int64_t t : lex_) {
    const int rank = RankInPool(Values(t));
    if (rank <= depth) pool_.push_back({t, rank});
  }
}

void RankedPoints::EnsurePool(size_t want) {
  want = std::min(want, lex_.size());
  if (depth_ >= 0 && pool_.size() >= want) return;
  int depth = std::max(depth_, 0) + slack_;
  for (Rebuild(depth); pool_.size() < want; Rebuild(depth)) depth = 2 * depth + 1;
}

std::vector<int64_t> RankedPoints::Top(int64_t k) {
  const size_t feasible = lex_.size() + broken_.size();
  const size_t want =
      static_cast<size_t>(std::clamp<int64_t>(k, 0, static_cast<int64_t>(feasible)));
  const bool ranked = want > 0 && !lex_.empty();
  std::vector<double> ref;
  if (ranked) {
    EnsurePool(want);
    // ReferencePoint of every finite point depends only on each objective's extremes.
    Points extremes(2, std::vector<double>(dims_));
    for (size_t m = 0; m < dims_; ++m) {
      extremes[0][m] = *finite_values_[m].begin();
      extremes[1][m] = *finite_values_[m].rbegin();
    }
    ref = ReferencePoint(extremes);
  }
  // The same pool, groups, counts and reference: the same picks.
  if (last_top_.version == version_ && last_top_.k == k && last_top_.want == want &&
      last_top_.ref == ref) {
    return last_top_.top;
  }
  std::vector<int64_t> top;
  if (ranked) {
    std::vector<Member> order = pool_;
    std::sort(order.begin(), order.end(), [](const Member& a, const Member& b) {
      return a.rank < b.rank || (a.rank == b.rank && a.trial < b.trial);
    });
    int last = -1;  // the deepest rank read
    for (size_t i = 0; i < order.size() && top.size() < want;) {
      size_t end = i;
      while (end < order.size() && order[end].rank == order[i].rank) ++end;
      last = order[i].rank;
      if (top.size() + (end - i) <= want) {
        for (size_t j = i; j < end; ++j) top.push_back(order[j].trial);
      } else {
        Points values;
        std::vector<int64_t> trials;
        std::vector<int> front;
        for (size_t j = i; j < end; ++j) {
          front.push_back(static_cast<int>(values.size()));
          values.push_back(Values(order[j].trial));
          trials.push_back(order[j].trial);
        }
        for (int p : GreedyPicks(values, trials, front, want - top.size(), ref)) {
          top.push_back(trials[static_cast<size_t>(p)]);
        }
      }
      i = end;
    }
    // A pool deeper than the top needs only costs each insertion more.
    if (depth_ > last + slack_) {
      depth_ = last + slack_;
      Evict();
    }
  }
  for (auto it = broken_.begin(); top.size() < want && it != broken_.end(); ++it) {
    top.push_back(*it);
  }
  for (auto it = infeasible_.begin();
       static_cast<int64_t>(top.size()) < k && it != infeasible_.end(); ++it) {
    top.push_back(it->second);
  }
  last_top_ = {version_, k, want, std::move(ref), top};
  return top;
}

}  // namespace sift::search

#include "search/multi/staircase_fronts.h"

#include <algorithm>

namespace sift::search {
namespace {

// The first i in [0, n) for which pred(i) is false, pred being true on a prefix: a bisection
// whose step is a conditional move, not a branch (each step's outcome is a coin toss, and a
// mispredicted branch per step cost more than the comparisons).
template <class Pred>
size_t PartitionPoint(size_t n, Pred&& pred) {
  if (n == 0) return 0;
  size_t base = 0;
  while (n > 1) {
    const size_t half = n / 2;
    base = pred(base + half) ? base + half : base;
    n -= half;
  }
  return base + (pred(base) ? 1 : 0);
}

// The first i in [from, n) for which pred(i) is false, pred being true on a prefix: steps of
// 1, 2, 4, ... from `from`, then a bisection of the last step, so a short run costs a few reads.
template <class Pred>
size_t Gallop(size_t from, size_t n, Pred&& pred) {
  size_t step = 1;
  while (from < n && pred(from)) {
    const size_t next = std::min(n, from + step);
    if (next == n || !pred(next)) {
      return from + 1 +
             PartitionPoint(next - from - 1, [&](size_t i) { return pred(from + 1 + i); });
    }
    from = next + 1;
    step *= 2;
  }
  return from;
}

// Exchanges v[at, at + moved) with `run`: v gets the run, `run` the entries it replaced. The
// common case, as many in as out, moves nothing else.
template <class T>
void Exchange(std::vector<T>& v, size_t at, size_t moved, std::vector<T>& run) {
  const size_t kept = std::min(moved, run.size());
  const auto first = v.begin() + static_cast<ptrdiff_t>(at);
  std::swap_ranges(run.begin(), run.begin() + static_cast<ptrdiff_t>(kept), first);
  const auto rest = first + static_cast<ptrdiff_t>(kept);
  if (moved > kept) {
    run.insert(run.end(), rest, rest + static_cast<ptrdiff_t>(moved - kept));
    v.erase(rest, rest + static_cast<ptrdiff_t>(moved - kept));
  } else if (run.size() > kept) {
    v.insert(rest, run.begin() + static_cast<ptrdiff_t>(kept), run.end());
    run.resize(kept);
  }
}

}  // namespace

void StaircaseFronts::Clear() {
  fronts_.clear();
  samples_.clear();
  tree_.clear();
  size_ = 0;
  rest_.clear();
  cap_ = SIZE_MAX;
}

void StaircaseFronts::PushFront(Run front) {
  // Its Fenwick node sums the fronts it covers, all before it.
  const size_t r = fronts_.size(), n = r + 1;
  if (tree_.empty()) tree_.push_back(0);
  tree_.push_back(static_cast<int64_t>(front.size()) + CountBefore(r) -
                  CountBefore(n - (n & (~n + 1))));
  fronts_.push_back(std::move(front));
  samples_.resize(fronts_.size() * 2 * kSamples);
  Sample(r, 0, 0, true);
}

size_t StaircaseFronts::CutFront(int64_t k) const {
  // Down the Fenwick tree: the longest prefix of fronts holding fewer than k points.
  const size_t f = fronts_.size();
  size_t step = 1;
  while (step * 2 <= f) step *= 2;
  size_t pos = 0;
  for (; f > 0 && step > 0; step /= 2) {
    if (pos + step <= f && tree_[pos + step] < k) {
      pos += step;
      k -= tree_[pos];
    }
  }
  return pos;
}

bool StaircaseFronts::Reach(int64_t k) {
  const size_t cut = CutFront(k);
  if (cut == fronts_.size() && !rest_.empty()) {
    Peel(k);
    cap_ = CutFront(k) + 1 + 2 * kAhead;
    return true;
  }
  cap_ = cut + 1 + 2 * kAhead;
  if (fronts_.size() <= cap_) return false;
  Defer(cut + 1 + kAhead);
  return true;
}

void StaircaseFronts::Defer(size_t keep) {
  for (size_t r = keep; r < fronts_.size(); ++r) {
    rest_.insert(rest_.end(), fronts_[r].begin(), fronts_[r].end());
  }
  fronts_.resize(keep);
  tree_.resize(keep + 1);  // a node covers only fronts at or before its own
  samples_.resize(keep * 2 * kSamples);
}

void StaircaseFronts::Peel(int64_t k) {
  // By the first value descending, ties by the second: a point's dominators all come before it.
  std::sort(rest_.begin(), rest_.end(),
            [](const Entry& x, const Entry& y) { return x.a > y.a || (x.a == y.a && x.b > y.b); });
  // Each bucket front's last point so far, the one with the largest second value: a point is
  // dominated by that front iff by it, iff the tail is ahead by (second value, first value).
  // Fronts dominating a point form a prefix, so its bucket rank is a bisection of the tails.
  Run tails;
  std::vector<size_t> ranks(rest_.size());
  for (size_t i = 0; i < rest_.size(); ++i) {
    const Entry& e = rest_[i];
    const size_t r = PartitionPoint(tails.size(), [&](size_t t) {
      return tails[t].b > e.b || (tails[t].b == e.b && tails[t].a > e.a);
    });
    if (r == tails.size()) {
      tails.push_back(e);
    } else {
      tails[r] = e;
    }
    ranks[i] = r;
  }
  std::vector<int64_t> sizes(tails.size(), 0);
  for (size_t r : ranks) ++sizes[r];
  // Fronts until the k-th point, then kAhead more.
  int64_t have = size_ - static_cast<int64_t>(rest_.size());
  size_t take = 0;
  while (take < sizes.size() && have < k) have += sizes[take++];
  take = std::min(sizes.size(), take + kAhead);
  std::vector<Run> peeled(take);
  Run kept;
  for (size_t i = 0; i < rest_.size(); ++i) {
    (ranks[i] < take ? peeled[ranks[i]] : kept).push_back(rest_[i]);
  }
  for (Run& front : peeled) {
    std::reverse(front.begin(), front.end());  // by the first value, ascending
    PushFront(std::move(front));
  }
  rest_ = std::move(kept);
}

void StaircaseFronts::Sample(size_t r, size_t lo, size_t hi, bool resized) {
  const Run& front = fronts_[r];
  double* at = &samples_[r * 2 * kSamples];
  const size_t m = front.size();
  // Unresized, only the samples inside [lo, hi) changed: j * m / kSamples in it.
  const size_t first = resized ? 0 : (lo * kSamples + m - 1) / m;
  const size_t last = resized ? kSamples : std::min(kSamples, (hi * kSamples + m - 1) / m);
  for (size_t j = first; j < last; ++j) {
    const size_t i = j * m / kSamples;
    at[j] = front[i].a;
    at[kSamples + j] = front[i].b;
  }
}

template <class SamplePred, class Pred>
size_t StaircaseFronts::Search(size_t r, SamplePred&& sample_pred, Pred&& pred) const {
  const double* s = &samples_[r * 2 * kSamples];
  // The samples for which pred holds: it fails after sample j - 1, by sample j.
  const size_t j = PartitionPoint(kSamples, [&](size_t i) { return sample_pred(s, i); });
  if (j == 0) return 0;
  const size_t m = fronts_[r].size();
  const size_t from = (j - 1) * m / kSamples + 1, to = j < kSamples ? j * m / kSamples : m;
  return from + PartitionPoint(to - from, [&](size_t i) { return pred(from + i); });
}

bool StaircaseFronts::Dominated(size_t r, double a, double b) const {
  // The first point q with a first value of at least a has the largest second value of those:
  // a point of the front dominates (a, b) iff q does. Sample j (point j * m / kSamples) is the
  // first sample at or past a, so q lies after sample j - 1 and at or before sample j, and its
  // second value between theirs.
  const double* sa = &samples_[r * 2 * kSamples];
  const double* sb = sa + kSamples;
  const size_t j = PartitionPoint(kSamples, [&](size_t i) { return sa[i] < a; });
  const Run& front = fronts_[r];
  const size_t m = front.size();
  size_t from = 0, to = 0;  // q's index lies in [from, to]
  if (j == 0) {
    return sb[0] > b || (sb[0] == b && sa[0] > a);  // q is the first point, sample 0
  }
  if (sb[j - 1] < b) return false;  // q's second value is at most sample j - 1's
  from = (j - 1) * m / kSamples + 1;
  if (j < kSamples) {
    if (sb[j] > b) return true;  // and at least sample j's
    to = j * m / kSamples;
  } else {
    to = m;
  }
  const Entry* f = front.data() + from;
  const size_t q = from + PartitionPoint(to - from, [&](size_t i) { return f[i].a < a; });
  if (q == m) return false;
  // Equal second values: dominating iff the first is larger (equal is the point itself; no
  // point of a front lies beside an equal one with a larger first value and the same second).
  const Entry& e = front[q];
  return e.b > b || (e.b == b && e.a > a);
}

size_t StaircaseFronts::RankOf(double a, double b) const {
  return PartitionPoint(fronts_.size(), [&](size_t r) { return Dominated(r, a, b); });
}

int64_t StaircaseFronts::CountBefore(size_t rank) const {
  int64_t sum = 0;
  for (size_t i = std::min(rank, fronts_.size()); i > 0; i &= i - 1) sum += tree_[i];
  return sum;
}

void StaircaseFronts::Resize(size_t rank, int64_t by) {
  for (size_t i = rank + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += by;
}

size_t StaircaseFronts::Add(double a, double b, int64_t trial) {
  ++size_;
  const size_t rank = RankOf(a, b);
  last_changed_ = rank;
  if (rank == fronts_.size() && (!rest_.empty() || rank >= cap_)) {
    rest_.push_back({a, b, trial});  // deeper than every exact front
    return rank;
  }
  carry_.assign(1, {a, b, trial});
  double box_a = a, box_b = b;  // the carried run's bounding box
  for (size_t r = rank;; ++r) {
    last_changed_ = r;
    if (r == fronts_.size()) {
      // Past the last front: a new one, or the deferred points when it may not be exact.
      if (rest_.empty() && r < cap_) {
        PushFront(carry_);
      } else {
        rest_.insert(rest_.end(), carry_.begin(), carry_.end());
      }
      return rank;
    }
    Run& front = fronts_[r];
    // The box's points: a run from the first with b <= box_b to the last with a <= box_a, less
    // copies of the box's corner (only p's own copies can be that: they stay where they are).
    const Entry* f = front.data();
    const size_t lo = Search(
        r, [&](const double* s, size_t j) { return s[kSamples + j] > box_b; },
        [&](size_t i) { return f[i].b > box_b; });
    // The run is mostly a point or two: gallop from lo rather than bisect the whole front (the
    // same end: first values ascend, so a point before lo past box_a puts f[lo] past it too).
    size_t hi = Gallop(lo, front.size(), [&](size_t i) { return f[i].a <= box_a; });
    while (hi > lo && f[hi - 1].a == box_a && f[hi - 1].b == box_b) --hi;
    // The carried run fits exactly where the moved one was (it lies in the same box, and
    // nothing left of it in this front dominates or is dominated by it).
    const size_t carried = carry_.size();
    Exchange(front, lo, hi - lo, carry_);
    const bool resized = carried != hi - lo;
    if (resized) Resize(r, static_cast<int64_t>(carried) - static_cast<int64_t>(hi - lo));
    Sample(r, lo, hi, resized);
    if (hi == lo) return rank;
    box_a = carry_.back().a;
    box_b = carry_.front().b;
  }
}

}  // namespace sift::search

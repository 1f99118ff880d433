// A growing multiset read only near one rank that moves by about one place per addition: a
// quantile of the scores recorded so far (ASHA's k-th best at a rung, the median at an epoch).
//
// The entries around that rank are kept sorted in a small window; the others sit in two 4-ary
// heaps, those below the window (largest first) and those above it (smallest first). The split
// at the rank itself, which moves with nearly every addition, is then a position in the window:
// two heaps split exactly at the rank instead (what this replaces) popped and pushed a boundary
// entry through every level of a heap of n on most additions, whose lower levels are cold once
// n is in the thousands. Here an addition outside the window is a heap push, which for a value
// drawn like the others moves up O(1) levels on average from the vector's (warm) tail, and the
// heaps are popped or pushed only when the rank walks out of the window or the window grows too
// wide, kSlack entries at a time. For scores from a steady distribution the rank's place in the
// window is a random walk with no drift, so that happens rarely (normal scores, ASHA's focus:
// 0.03-0.05 heap moves per addition, in batches); scores that trend (a study that improves) make
// it drift, up to 1.33 moves per addition for ascending scores: what the exact split cost there
// too (it moved 0.89 entries through a whole heap per addition for normal scores, 1.33 for
// ascending ones). Ties must be broken by `Less` (a strict total order), so the answers do not
// depend on the order of additions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sift::search {

// A 4-ary heap in a vector: the front is the entry `before` puts first. A node's four children
// share one or two cache lines, so a sift through 10,000 entries touches half the lines a binary
// heap would.
template <class T, class Before>
void Push4(std::vector<T>& h, const T& e, Before before) {
  size_t i = h.size();
  h.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

template <class T, class Before>
T Pop4(std::vector<T>& h, Before before) {
  const T front = h.front();
  const T last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return front;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    for (size_t j = first + 1; j < std::min(first + 4, n); ++j) {
      if (before(h[j], h[best])) best = j;
    }
    if (!before(h[best], last)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  return front;
}

template <class T, class Less>
class RankWindow {
 public:
  // Ranks either side of the focus that At() may read.
  static constexpr int64_t kReach = 2;
  // Entries pulled into the window past the ones needed, and kept beyond the reach before the
  // window is trimmed back (to kSlack); the window holds at most about 4 * kSlack + 2 * kReach.
  static constexpr int64_t kSlack = 16;

  int64_t size() const {
    return static_cast<int64_t>(below_.size() + window_.size() + above_.size());
  }

  // Adds `e`, then makes the ranks within kReach of `focus` (0 = the smallest) readable.
  void Add(const T& e, int64_t focus) {
    const Less less;
    if (window_.empty()) {
      // Only when empty: the window always holds the focus of a non-empty set.
      window_.push_back(e);
    } else if (less(e, window_.front())) {
      Push4(below_, e, Larger);
    } else if (less(window_.back(), e)) {
      Push4(above_, e, Smaller);
    } else {
      window_.insert(std::upper_bound(window_.begin(), window_.end(), e, less), e);
    }
    Focus(focus);
  }

  // The entry of rank `rank`, within kReach of the last focus.
  const T& At(int64_t rank) const {
    return window_[static_cast<size_t>(rank - static_cast<int64_t>(below_.size()))];
  }

  void Clear() {
    below_.clear();
    window_.clear();
    above_.clear();
  }

 private:
  static bool Larger(const T& a, const T& b) { return Less()(b, a); }
  static bool Smaller(const T& a, const T& b) { return Less()(a, b); }

  void Focus(int64_t focus) {
    const int64_t n = size();
    const int64_t need_lo = std::max<int64_t>(0, focus - kReach);
    const int64_t need_hi = std::min<int64_t>(n - 1, focus + kReach);
    auto lo = static_cast<int64_t>(below_.size());
    if (need_lo < lo) {  // pull the largest of those below, in one move of the window
      const int64_t pull = std::min(lo, lo - need_lo + kSlack);
      pulled_.clear();
      for (int64_t i = 0; i < pull; ++i) pulled_.push_back(Pop4(below_, Larger));
      window_.insert(window_.begin(), pulled_.rbegin(), pulled_.rend());
      lo -= pull;
    }
    int64_t hi = lo + static_cast<int64_t>(window_.size()) - 1;
    if (need_hi > hi) {
      const int64_t pull = std::min(static_cast<int64_t>(above_.size()), need_hi - hi + kSlack);
      for (int64_t i = 0; i < pull; ++i) window_.push_back(Pop4(above_, Smaller));
      hi += pull;
    }
    if (need_lo - lo > 2 * kSlack) {  // trim back to kSlack below the reach
      const int64_t drop = need_lo - lo - kSlack;
      for (int64_t i = 0; i < drop; ++i) Push4(below_, window_[static_cast<size_t>(i)], Larger);
      window_.erase(window_.begin(), window_.begin() + drop);
    }
    if (hi - need_hi > 2 * kSlack) {
      for (int64_t drop = hi - need_hi - kSlack; drop > 0; --drop) {
        Push4(above_, window_.back(), Smaller);
        window_.pop_back();
      }
    }
  }

  std::vector<T> below_;   // 4-ary heap, largest first: every entry less than window_.front()
  std::vector<T> window_;  // sorted ascending
  std::vector<T> above_;   // 4-ary heap, smallest first: every entry greater than window_.back()
  std::vector<T> pulled_;  // scratch
};

}  // namespace sift::search

// Two-objective non-dominated fronts kept as sorted staircases, so placing a point and reading
// its rank cost binary searches rather than a scan of every point.
//
// Each front is sorted by the first value, ascending; in a front the second value then never
// rises (two points of one front with equal first values are equal). A point's rank is the first
// front without a point dominating it: fronts below a dominating one dominate it too, so the
// fronts can be searched by bisection, each in O(log m).
//
// A new point p joins front R (its rank) and the points of R it dominates move down one front.
// Those form one run of the staircase, and so do the points of the next front that the moved run
// dominates: exactly the points inside the run's bounding box (a point of that box is dominated
// by the run's first point or by the first point of the old front at or past its first value,
// which lies in the run). So each front the move reaches costs two bisections (mostly answered
// from the front's samples) and one exchange of runs, and the move stops at the first front
// with nothing in the box.
//
// A decision reads ranks only down to its cut (the front holding the k-th point), so Reach(k)
// keeps exact fronts only to a margin past the cut and leaves every deeper point unsorted in a
// bucket: a point there has rank FrontCount() + its rank among the bucket's points, so a new
// point every front dominates, or a run moved out of the last front, is one append. When the cut
// nears the last exact front, a sort of the bucket peels the next fronts off it. Until Reach is
// first called every front is exact.
//
// Values must be finite (the owner keeps the others apart); oriented, larger is better.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sift::search {

class StaircaseFronts {
 public:
  struct Entry {
    double a, b;  // the two oriented values
    int64_t trial;
  };

  // Returns the new point's rank (FrontCount() when it is deferred: deeper than every front).
  size_t Add(double a, double b, int64_t trial);
  // The deepest front whose points the last Add changed: fronts from its rank down to this one
  // gained or lost points, the others kept theirs (FrontCount() or more: only new or deferred).
  size_t LastChanged() const { return last_changed_; }
  void Clear();
  // Makes the fronts exact down to the one holding the k-th best point at least, peeling fronts
  // off the deferred points or deferring fronts far past it. Returns whether the fronts changed
  // (a rank Add returned may then be stale).
  bool Reach(int64_t k);

  // The rank of a point with these values: its front if it is here, else the front it would join
  // (FrontCount() when every exact front dominates it: then it is deferred, or would be).
  size_t RankOf(double a, double b) const;
  // The exact fronts: ranks below this are exact; deferred points all rank at or past it.
  size_t FrontCount() const { return fronts_.size(); }
  size_t Deferred() const { return rest_.size(); }
  // A front's points, by their first value.
  const std::vector<Entry>& Front(size_t rank) const { return fronts_[rank]; }
  // The number of points in the fronts before `rank`.
  int64_t CountBefore(size_t rank) const;
  // The front holding the k-th best exact point, FrontCount() when there are fewer.
  size_t CutFront(int64_t k) const;
  int64_t size() const { return size_; }  // deferred points included

 private:
  using Run = std::vector<Entry>;
  // Whether a point of front r dominates (a, b).
  bool Dominated(size_t r, double a, double b) const;
  // The first index of front r at which pred (true on a prefix) fails; sample_pred(s, j) is
  // pred of sample j, read from the front's samples `s`. Bisects between two samples only.
  template <class SamplePred, class Pred>
  size_t Search(size_t r, SamplePred&& sample_pred, Pred&& pred) const;
  void Resize(size_t rank, int64_t by);
  // Appends a last exact front.
  void PushFront(Run front);
  // Moves fronts `keep` onward to the deferred points.
  void Defer(size_t keep);
  // Peels fronts off the deferred points until `k` exact points and kAhead fronts past them.
  void Peel(int64_t k);
  // Refreshes front r's samples; `lo`, `hi`: the range that changed when its size did not.
  void Sample(size_t r, size_t lo, size_t hi, bool resized);

  std::vector<Run> fronts_;
  // Per front, kSamples of its points evenly spaced (their first values, then their second),
  // all fronts in one array: most of the bisection's questions are answered from these few
  // cache lines, and only a question about a point between two samples reads the front itself
  // (the fronts' own arrays, scattered over the heap, cost a cache miss a step).
  static constexpr size_t kSamples = 8;
  std::vector<double> samples_;
  // Front sizes as a Fenwick tree (1-based), so CountBefore is O(log fronts) with hundreds of
  // fronts at a rung of thousands of points.
  std::vector<int64_t> tree_;
  int64_t size_ = 0;
  Run carry_;  // Add's scratch: the run moving into a front, then the one moving out of it
  // The deferred points, in no order, and how many exact fronts Add may grow to while there are
  // none. Reach defers the fronts more than 2 * kAhead past the cut and, once the cut passes
  // the last exact front, peels to kAhead past it: a peel sorts the bucket, so it takes many.
  static constexpr size_t kAhead = 16;
  Run rest_;
  size_t cap_ = SIZE_MAX;
  size_t last_changed_ = 0;
};

}  // namespace sift::search

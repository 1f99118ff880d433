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

  // Returns the new point's rank.
  size_t Add(double a, double b, int64_t trial);
  void Clear();

  // The rank of a point with these values: its front if it is here, else the front it would join
  // (FrontCount() when every front dominates it).
  size_t RankOf(double a, double b) const;
  size_t FrontCount() const { return fronts_.size(); }
  // A front's points, by their first value.
  const std::vector<Entry>& Front(size_t rank) const { return fronts_[rank]; }
  // The number of points in the fronts before `rank`.
  int64_t CountBefore(size_t rank) const;
  int64_t size() const { return size_; }

 private:
  using Run = std::vector<Entry>;
  // Whether a point of front r dominates (a, b).
  bool Dominated(size_t r, double a, double b) const;
  // The first index of front r at which pred (true on a prefix) fails; sample_pred(s, j) is
  // pred of sample j, read from the front's samples `s`. Bisects between two samples only.
  template <class SamplePred, class Pred>
  size_t Search(size_t r, SamplePred&& sample_pred, Pred&& pred) const;
  void Resize(size_t rank, int64_t by);
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
};

}  // namespace sift::search

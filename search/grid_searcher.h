// Grid search for small, mostly discrete spaces: every combination of categorical choices,
// integers (all of them, or `points_per_int` evenly spaced when there are more) and floats
// (`points_per_float` evenly spaced in unit space, so log scales are honoured). Conditional
// parameters multiply the grid only where they are active. The grid is visited in a seeded
// shuffled order, skipping configurations some trial already has; none are left when it is done.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "search/searcher.h"

namespace sift::search {

struct GridOptions {
  int64_t points_per_float = 5;
  int64_t points_per_int = 10;
  bool shuffle = true;
};

// Grids larger than this are rejected at construction (use sobol or random instead).
constexpr size_t kMaxGridSize = 100000;

class GridSearcher : public Searcher {
 public:
  GridSearcher(const SearchSpace& space, GridOptions options);
  std::vector<Params> Suggest(const StudyView& study, int count) override;

  size_t size() const { return count_; }
  // Non-empty when the space's grid exceeds kMaxGridSize.
  const std::string& error() const { return error_; }

 private:
  // The first `upto` parameters of a point's row as Params (inactive ones left out).
  Params PointAt(const uint32_t* row, size_t upto) const;
  Params Point(size_t index) const {
    return PointAt(cells_.data() + index * names_.size(), names_.size());
  }

  // Points in declaration order (shuffled per seed at Suggest time), kept as one index into
  // values_ per parameter: 65,536 points of 16 parameters take 4 MB, not 200 MB of maps.
  std::vector<std::string> names_;
  std::vector<std::vector<ParamValue>> values_;
  std::vector<uint32_t> cells_;  // count_ rows of names_.size() indices (kInactive: inactive)
  size_t count_ = 0;
  GridOptions options_;
  std::string error_;
  // Caches that only save work (each ask used to shuffle the grid and collect every trial's
  // parameters): the seed's order, the parameters of the first folded_ trials, and the first
  // position in order_ not taken by them.
  std::vector<size_t> order_;
  bool order_ready_ = false;
  uint64_t order_seed_ = 0;
  std::set<Params> taken_;
  size_t folded_ = 0;
  size_t next_ = 0;
};

}  // namespace sift::search

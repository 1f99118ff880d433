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

  size_t size() const { return grid_.size(); }
  // Non-empty when the space's grid exceeds kMaxGridSize.
  const std::string& error() const { return error_; }

 private:
  std::vector<Params> grid_;  // declaration order; shuffled per seed at Suggest time
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

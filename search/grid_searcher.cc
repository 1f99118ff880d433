#include "search/grid_searcher.h"

#include <algorithm>
#include <set>

namespace sift::search {
namespace {

std::vector<ParamValue> Values(const SearchSpace& space, const ParamSpec& spec,
                               const GridOptions& o) {
  if (spec.type == ParamType::kCategorical) return spec.choices;
  std::vector<ParamValue> out;
  if (spec.type == ParamType::kInt && spec.high - spec.low + 1 <= o.points_per_int) {
    for (double v = spec.low; v <= spec.high; v += 1) out.emplace_back(static_cast<int64_t>(v));
    return out;
  }
  const int64_t n = spec.type == ParamType::kInt ? o.points_per_int : o.points_per_float;
  for (int64_t i = 0; i < n; ++i) {
    // Endpoints included: for floats the bounds are usually meaningful values.
    const double u = n == 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(n - 1);
    ParamValue v = space.FromUnit(spec, u);
    // Floats take the exact bounds at the ends rather than exp(log(low)) round trips.
    if (spec.type == ParamType::kFloat && i == 0) v = spec.low;
    if (spec.type == ParamType::kFloat && i == n - 1 && n > 1) v = spec.high;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

constexpr uint32_t kInactive = UINT32_MAX;

}  // namespace

GridSearcher::GridSearcher(const SearchSpace& space, GridOptions options) : options_(options) {
  const size_t k = space.size();
  for (const auto& spec : space.params()) {
    names_.push_back(spec.name);
    values_.push_back(Values(space, spec, options_));
  }
  // Depth-first over parameters in declaration order; inactive ones do not branch. Each step
  // counts its rows before making them, so a grid over the cap is refused without being built.
  std::vector<uint32_t> rows(k, kInactive);
  size_t n = 1;
  for (size_t i = 0; i < k; ++i) {
    const ParamSpec& spec = space.params()[i];
    std::vector<char> active(n, 1);
    size_t m = 0;
    for (size_t p = 0; p < n; ++p) {
      if (spec.condition) {
        active[p] = space.IsActive(spec, PointAt(rows.data() + p * k, i)) ? 1 : 0;
      }
      m += active[p] ? values_[i].size() : 1;
    }
    if (m > kMaxGridSize) {
      error_ = "grid has more than " + std::to_string(kMaxGridSize) +
               " points; use fewer points per parameter, or sobol/random search";
      return;
    }
    std::vector<uint32_t> next;
    next.reserve(m * k);
    for (size_t p = 0; p < n; ++p) {
      const auto row = rows.begin() + static_cast<std::ptrdiff_t>(p * k);
      if (!active[p]) {
        next.insert(next.end(), row, row + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      for (uint32_t v = 0; v < values_[i].size(); ++v) {
        next.insert(next.end(), row, row + static_cast<std::ptrdiff_t>(k));
        next[next.size() - k + i] = v;
      }
    }
    rows = std::move(next);
    n = m;
  }
  cells_ = std::move(rows);
  count_ = n;
}

Params GridSearcher::PointAt(const uint32_t* row, size_t upto) const {
  Params p;
  for (size_t j = 0; j < upto; ++j) {
    if (row[j] != kInactive) p[names_[j]] = values_[j][row[j]];
  }
  return p;
}

std::vector<Params> GridSearcher::Suggest(const StudyView& study, int count) {
  // Start over for another history: a different seed (another order) or a shorter one.
  if (!order_ready_ || order_seed_ != study.seed || study.trials.size() < folded_) {
    order_.resize(count_);
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    if (options_.shuffle) {  // Fisher-Yates with the portable generator
      Rng rng(DeriveSeed(study.seed, {0x47524944ULL}));
      for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.Below(i)]);
    }
    order_ready_ = true;
    order_seed_ = study.seed;
    taken_.clear();
    folded_ = 0;
    next_ = 0;
  }
  // Trials only ever join the history and their parameters never change: fold in the new ones.
  for (; folded_ < study.trials.size(); ++folded_) taken_.insert(study.trials[folded_].params);
  // Every point before next_ is taken and stays taken, so each ask starts there.
  while (next_ < order_.size() && taken_.count(Point(order_[next_]))) ++next_;
  std::vector<Params> out;
  for (size_t k = next_; k < order_.size(); ++k) {
    if (static_cast<int>(out.size()) >= count) break;
    Params p = Point(order_[k]);
    if (!taken_.count(p)) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace sift::search

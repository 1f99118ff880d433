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

}  // namespace

GridSearcher::GridSearcher(const SearchSpace& space, GridOptions options) : options_(options) {
  std::vector<std::vector<ParamValue>> values;
  for (const auto& spec : space.params()) values.push_back(Values(space, spec, options_));
  // Depth-first over parameters in declaration order; inactive ones do not branch.
  std::vector<Params> partial{Params{}};
  for (size_t i = 0; i < space.size() && error_.empty(); ++i) {
    const ParamSpec& spec = space.params()[i];
    std::vector<Params> next;
    for (const Params& p : partial) {
      if (!space.IsActive(spec, p)) {
        next.push_back(p);
        continue;
      }
      for (const auto& v : values[i]) {
        Params q = p;
        q[spec.name] = v;
        next.push_back(std::move(q));
      }
      if (next.size() > kMaxGridSize) {
        error_ = "grid has more than " + std::to_string(kMaxGridSize) +
                 " points; use fewer points per parameter, or sobol/random search";
        break;
      }
    }
    partial = std::move(next);
  }
  if (error_.empty()) grid_ = std::move(partial);
}

std::vector<Params> GridSearcher::Suggest(const StudyView& study, int count) {
  // Start over for another history: a different seed (another order) or a shorter one.
  if (!order_ready_ || order_seed_ != study.seed || study.trials.size() < folded_) {
    order_.resize(grid_.size());
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
  while (next_ < order_.size() && taken_.count(grid_[order_[next_]])) ++next_;
  std::vector<Params> out;
  for (size_t k = next_; k < order_.size(); ++k) {
    if (static_cast<int>(out.size()) >= count) break;
    const Params& p = grid_[order_[k]];
    if (!taken_.count(p)) out.push_back(p);
  }
  return out;
}

}  // namespace sift::search

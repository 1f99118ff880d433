#include "search/priors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace sift::search {

int64_t PriorTrialEquivalent(const Priors& priors) {
  return static_cast<int64_t>(
      std::ceil(priors.weight * static_cast<double>(priors.points.size()) - 1e-9));
}

bool FitsSpec(const ParamSpec& spec, const ParamValue& value) {
  if (spec.type == ParamType::kCategorical) {
    return std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end();
  }
  double x = 0;
  if (!AsDouble(value, &x) || !std::isfinite(x)) return false;
  if (spec.type == ParamType::kInt && x != std::floor(x)) return false;
  return x >= spec.low && x <= spec.high;
}

std::vector<double> PriorUnitRows(const SearchSpace& space, const std::vector<Prior>& priors) {
  const size_t dims = space.size();
  std::vector<double> rows(priors.size() * dims, std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < priors.size(); ++i) {
    // Only the values this space can take decide which of its parameters are active.
    Params fitting;
    for (const ParamSpec& spec : space.params()) {
      auto it = priors[i].params.find(spec.name);
      if (it != priors[i].params.end() && FitsSpec(spec, it->second)) {
        fitting[spec.name] = it->second;
      }
    }
    for (size_t d = 0; d < dims; ++d) {
      const ParamSpec& spec = space.params()[d];
      auto it = fitting.find(spec.name);
      if (it == fitting.end() || !space.IsActive(spec, fitting)) continue;
      rows[i * dims + d] = space.ToUnit(spec, it->second);
    }
  }
  return rows;
}

std::vector<std::string> SharedParams(const SearchSpace& a, const SearchSpace& b) {
  std::vector<std::string> shared;
  for (const ParamSpec& spec : a.params()) {
    const ParamSpec* other = b.Find(spec.name);
    if (other != nullptr && other->type == spec.type) shared.push_back(spec.name);
  }
  return shared;
}

void SplitPriors(const std::vector<Prior>& priors, double gamma, int64_t gamma_max,
                 std::vector<size_t>* good, std::vector<size_t>* bad) {
  good->clear();
  bad->clear();
  std::map<int64_t, std::vector<size_t>> by_source;
  for (size_t i = 0; i < priors.size(); ++i) by_source[priors[i].source].push_back(i);
  std::vector<char> is_good(priors.size(), 0);
  for (auto& [source, members] : by_source) {
    // Best first; ties by position, so the split does not depend on the sort.
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t x, size_t y) { return priors[x].score > priors[y].score; });
    const size_t n = members.size();
    const size_t n_good =
        std::min<size_t>(static_cast<size_t>(std::ceil(gamma * static_cast<double>(n))),
                         static_cast<size_t>(std::max<int64_t>(gamma_max, 0)));
    for (size_t k = 0; k < n_good; ++k) is_good[members[k]] = 1;
  }
  for (size_t i = 0; i < priors.size(); ++i) (is_good[i] ? good : bad)->push_back(i);
}

}  // namespace sift::search

#include "search/space.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace sift::search {
namespace {

bool SameValue(const ParamValue& a, const ParamValue& b) {
  double x, y;
  if (AsDouble(a, &x) && AsDouble(b, &y)) return x == y;
  return a == b;
}

// Each value listed more than once, with how often, in order of first appearance. Sorting keys
// keeps it O(n log n): the pairwise check it replaces took minutes on a list of 8,000 copies.
std::vector<std::pair<ParamValue, size_t>> Duplicates(const std::vector<ParamValue>& values) {
  // Numbers compare by value (1 and 1.0 are one choice), labels as strings; NaN equals nothing.
  using Key = std::tuple<bool, double, std::string>;  // (is a label, number, label)
  std::map<Key, std::pair<size_t, size_t>> seen;      // key -> (first index, count)
  for (size_t i = 0; i < values.size(); ++i) {
    double x;
    Key key;
    if (AsDouble(values[i], &x)) {
      if (std::isnan(x)) continue;
      key = {false, x == 0 ? 0.0 : x, ""};  // -0 and 0 are the same choice
    } else {
      key = {true, 0.0, std::get<std::string>(values[i])};
    }
    ++seen.try_emplace(key, i, 0).first->second.second;
  }
  std::vector<std::pair<size_t, size_t>> repeated;  // (first index, count)
  for (const auto& [key, at] : seen) {
    if (at.second > 1) repeated.push_back(at);
  }
  std::sort(repeated.begin(), repeated.end());
  std::vector<std::pair<ParamValue, size_t>> out;
  for (const auto& [first, count] : repeated) out.emplace_back(values[first], count);
  return out;
}

}  // namespace

const ParamSpec* SearchSpace::Find(const std::string& name) const {
  for (const auto& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> SearchSpace::Validate() const {
  std::vector<std::string> errors;
  std::set<std::string> seen;
  if (params_.empty()) errors.push_back("search_space: must define at least one parameter");
  for (const auto& p : params_) {
    const std::string& n = p.name;
    if (n.empty()) {
      errors.push_back("search_space: a parameter has an empty name");
      continue;
    }
    if (!seen.insert(n).second) errors.push_back(n + ": defined twice");
    if (p.numeric()) {
      if (!std::isfinite(p.low)) errors.push_back(n + ".low: must be a finite number");
      if (!std::isfinite(p.high)) errors.push_back(n + ".high: must be a finite number");
      if (p.low > p.high) errors.push_back(n + ".high: must be >= low");
      if (p.scale == Scale::kLog && !(p.low > 0)) {
        errors.push_back(n + ".low: must be > 0 for a log scale");
      }
      if (p.type == ParamType::kInt &&
          (p.low != std::floor(p.low) || p.high != std::floor(p.high))) {
        errors.push_back(n + ": int bounds must be whole numbers");
      }
      if (p.type == ParamType::kInt && !(IntBoundInRange(p.low) && IntBoundInRange(p.high))) {
        errors.push_back(n + ": int bounds must be within +/-2^53 (9007199254740992)");
      }
    } else {
      if (p.choices.empty()) errors.push_back(n + ".choices: must list at least one value");
      for (const auto& [value, times] : Duplicates(p.choices)) {
        errors.push_back(n + ".choices: '" + ToString(value) + "' is listed " +
                         std::to_string(times) + " times");
      }
    }
    if (p.condition) {
      const ParamSpec* parent = Find(p.condition->parent);
      if (parent == nullptr || !seen.count(p.condition->parent) || parent == &p) {
        errors.push_back(n + ".condition: parent '" + p.condition->parent +
                         "' must be a parameter declared before it");
      } else if (parent->type != ParamType::kCategorical) {
        errors.push_back(n + ".condition: parent '" + parent->name + "' must be categorical");
      } else {
        for (const auto& v : p.condition->values) {
          if (ChoiceIndex(*parent, v) < 0) {
            errors.push_back(n + ".condition: '" + ToString(v) + "' is not a choice of '" +
                             parent->name + "'");
          }
        }
      }
    }
  }
  return errors;
}

bool SearchSpace::IsActive(const ParamSpec& spec, const Params& params) const {
  if (!spec.condition) return true;
  const ParamSpec* parent = Find(spec.condition->parent);
  if (parent == nullptr || !IsActive(*parent, params)) return false;
  auto it = params.find(parent->name);
  if (it == params.end()) return false;
  for (const auto& v : spec.condition->values) {
    if (SameValue(v, it->second)) return true;
  }
  return false;
}

int SearchSpace::ChoiceIndex(const ParamSpec& spec, const ParamValue& value) const {
  for (size_t i = 0; i < spec.choices.size(); ++i) {
    if (SameValue(spec.choices[i], value)) return static_cast<int>(i);
  }
  return -1;
}

double SearchSpace::ToUnit(const ParamSpec& spec, const ParamValue& value) const {
  if (spec.type == ParamType::kCategorical) {
    const int k = static_cast<int>(spec.choices.size());
    return k <= 1 ? 0.5 : (ChoiceIndex(spec, value) + 0.5) / k;
  }
  double x = 0;
  AsDouble(value, &x);
  double lo = spec.low, hi = spec.high;
  if (spec.type == ParamType::kInt) {
    // Each integer owns an equal-width cell, so uniform unit samples give uniform integers.
    lo -= 0.5;
    hi += 0.5;
    if (spec.scale == Scale::kLog) lo = std::max(lo, spec.low * 0.5);
  }
  if (spec.scale == Scale::kLog) {
    lo = std::log(lo);
    hi = std::log(hi);
    x = std::log(x);
  }
  if (hi <= lo) return 0.5;
  return std::clamp((x - lo) / (hi - lo), 0.0, 1.0);
}

ParamValue SearchSpace::FromUnit(const ParamSpec& spec, double u) const {
  u = std::clamp(u, 0.0, 1.0);
  if (spec.type == ParamType::kCategorical) {
    const size_t k = spec.choices.size();
    size_t i = std::min(k - 1, static_cast<size_t>(u * static_cast<double>(k)));
    return spec.choices[i];
  }
  double lo = spec.low, hi = spec.high;
  if (spec.type == ParamType::kInt) {
    lo -= 0.5;
    hi += 0.5;
    if (spec.scale == Scale::kLog) lo = std::max(lo, spec.low * 0.5);
  }
  double x;
  if (spec.scale == Scale::kLog) {
    x = std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
  } else {
    x = lo + u * (hi - lo);
  }
  if (spec.type == ParamType::kInt) {
    const double r = std::clamp(std::round(x), spec.low, spec.high);
    return static_cast<int64_t>(r);
  }
  return std::clamp(x, spec.low, spec.high);
}

Params SearchSpace::Sample(Rng& rng) const {
  Params out;
  for (const auto& spec : params_) {
    // Draw even for inactive parameters so one parameter's condition never shifts another's stream.
    const double u = rng.Uniform();
    if (IsActive(spec, out)) out[spec.name] = FromUnit(spec, u);
  }
  return out;
}

Params SearchSpace::Complete(const Params& fixed, Rng& rng) const {
  Params out;
  for (const auto& spec : params_) {
    const double u = rng.Uniform();  // drawn for every parameter, as Sample does
    if (!IsActive(spec, out)) continue;
    auto it = fixed.find(spec.name);
    out[spec.name] = it != fixed.end() ? it->second : FromUnit(spec, u);
  }
  return out;
}

std::string SearchSpace::Check(const Params& params) const {
  for (const auto& [name, value] : params) {
    if (Find(name) == nullptr) return name + ": not a parameter of the search space";
  }
  for (const auto& spec : params_) {
    auto it = params.find(spec.name);
    const bool active = IsActive(spec, params);
    if (!active) {
      if (it != params.end()) return spec.name + ": set but inactive under its condition";
      continue;
    }
    if (it == params.end()) return spec.name + ": missing";
    if (spec.type == ParamType::kCategorical) {
      if (ChoiceIndex(spec, it->second) < 0) {
        return spec.name + ": '" + ToString(it->second) + "' is not one of its choices";
      }
      continue;
    }
    double x;
    if (!AsDouble(it->second, &x)) return spec.name + ": must be numeric";
    if (spec.type == ParamType::kInt && !std::holds_alternative<int64_t>(it->second)) {
      return spec.name + ": must be an integer";
    }
    if (x < spec.low || x > spec.high) {
      return spec.name + ": " + ToString(it->second) + " is outside [" +
             ToString(ParamValue(spec.low)) + ", " + ToString(ParamValue(spec.high)) + "]";
    }
  }
  return "";
}

}  // namespace sift::search

#include "common/config/config_space.h"

#include <algorithm>
#include <map>
#include <utility>

namespace sift::common {

using search::ParamSpec;
using search::ParamType;
using search::ParamValue;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

namespace {

// The size of a list that ReadValues would read, checked before it reads it.
bool WithinLimit(const YAML::Node& node, const std::string& path, const char* what, size_t limit,
                 const char* name, Diagnostics* d) {
  if (!node.IsSequence() || node.size() <= limit) return true;
  d->Error(path, OverLimit(node.size(), what, limit, name));
  return false;
}

// condition: {parent: [values]} (or {parent: value}): active only when parent takes one of them.
void ParseCondition(const YAML::Node& node, const std::string& path, const ConfigLimits& limits,
                    Diagnostics* d, ParamSpec* spec) {
  MapReader r(node, path, d);
  if (!r.ok()) return;
  const auto entries = r.Entries();
  if (entries.size() != 1) {
    d->Error(path, "must name exactly one parent, as {parent: [values]}; got " +
                       std::to_string(entries.size()) + " entries");
    return;
  }
  search::Condition c;
  c.parent = entries[0].first;
  if (!WithinLimit(entries[0].second, path + "." + c.parent, "values", limits.max_choices,
                   "max_choices", d)) {
    return;
  }
  ReadValues(entries[0].second, path + "." + c.parent, /*allow_scalar=*/true, d, &c.values);
  if (c.values.empty() && entries[0].second.IsSequence()) {
    d->Error(path + "." + c.parent, "must list at least one value");
  }
  spec->condition = std::move(c);
}

// One parameter; `*broken` when its own fields had errors (later checks then skip it).
ParamSpec ParseParam(const std::string& name, const YAML::Node& node, const ConfigLimits& limits,
                     Diagnostics* d, bool* broken) {
  const size_t errors_before = d->count();
  const std::string path = "search_space." + name;
  ParamSpec p;
  p.name = name;
  MapReader r(node, path, d);
  if (!r.ok()) {
    *broken = true;
    return p;
  }
  std::string type;
  if (!r.Enum("type", {"float", "int", "categorical"}, &type) && !r.Has("type")) {
    d->Error(path + ".type", "missing; one of float, int, categorical");
  }
  const auto reject = [&](const std::string& key, const std::string& problem) {
    if (!r.Has(key)) return;
    r.Get(key);
    d->Error(path + "." + key, problem);
  };
  if (type == "categorical") {
    p.type = ParamType::kCategorical;
    const YAML::Node choices = r.Get("choices");
    if (!choices.IsDefined()) {
      d->Error(path + ".choices", "missing; a categorical parameter lists its choices");
    } else if (WithinLimit(choices, path + ".choices", "choices", limits.max_choices, "max_choices",
                           d)) {
      ReadValues(choices, path + ".choices", /*allow_scalar=*/false, d, &p.choices);
    }
    for (const char* key : {"low", "high", "scale"}) {
      reject(key, "only for float and int parameters");
    }
  } else if (type == "float" || type == "int") {
    p.type = type == "int" ? ParamType::kInt : ParamType::kFloat;
    for (const auto& [key, bound] : {std::pair{"low", &p.low}, std::pair{"high", &p.high}}) {
      if (!r.Double(key, bound) && !r.Has(key)) {
        d->Error(path + "." + key, "missing; a " + type + " parameter needs low and high");
      }
    }
    std::string scale;
    if (r.Enum("scale", {"linear", "log"}, &scale)) {
      p.scale = scale == "log" ? search::Scale::kLog : search::Scale::kLinear;
    }
    reject("choices", "only for categorical parameters");
  } else {
    // Unknown type: the other fields cannot be judged, but they are not unknown keys.
    for (const char* key : {"low", "high", "scale", "choices"}) r.Get(key);
  }
  if (const YAML::Node c = r.Get("condition"); c.IsDefined()) {
    ParseCondition(c, path + ".condition", limits, d, &p);
  }
  r.RejectUnknown();
  *broken = d->count() > errors_before;
  return p;
}

// Drops conditions on unknown parents and breaks cycles (each reported), then orders parents
// before their children, otherwise keeping document order.
std::vector<ParamSpec> OrderByCondition(std::vector<ParamSpec> params, size_t max_depth,
                                        Diagnostics* d) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < params.size(); ++i) index[params[i].name] = i;
  for (auto& p : params) {
    if (p.condition && !index.count(p.condition->parent)) {
      d->Error("search_space." + p.name + ".condition." + p.condition->parent,
               "'" + p.condition->parent + "' is not a parameter of the search space");
      p.condition.reset();
    }
  }
  const auto parent_of = [&](size_t i) -> long {
    return params[i].condition ? static_cast<long>(index[params[i].condition->parent]) : -1;
  };
  // Each parameter has at most one parent, so walking parent links finds every cycle.
  enum { kNew, kOnPath, kDone };
  std::vector<int> state(params.size(), kNew);
  for (size_t start = 0; start < params.size(); ++start) {
    std::vector<size_t> walk;
    long i = static_cast<long>(start);
    while (i >= 0 && state[i] == kNew) {
      state[i] = kOnPath;
      walk.push_back(static_cast<size_t>(i));
      i = parent_of(static_cast<size_t>(i));
    }
    if (i >= 0 && state[i] == kOnPath) {
      const auto first = std::find(walk.begin(), walk.end(), static_cast<size_t>(i));
      std::string chain;
      for (auto it = first; it != walk.end(); ++it) chain += params[*it].name + " -> ";
      chain += params[*first].name;
      d->Error("search_space." + params[*first].name + ".condition",
               "conditions form a cycle: " + chain + " (each depends on the next)");
      for (auto it = first; it != walk.end(); ++it) params[*it].condition.reset();
    }
    for (size_t j : walk) state[j] = kDone;
  }
  // Now acyclic: a chain longer than the limit is cut at its deepest link, once per parameter.
  std::vector<size_t> depth(params.size(), 0);  // 0: not yet known; a root is 1
  const auto depth_of = [&](size_t i, const auto& self) -> size_t {
    if (depth[i] == 0) {
      const long parent = parent_of(i);
      depth[i] = parent < 0 ? 1 : self(static_cast<size_t>(parent), self) + 1;
    }
    return depth[i];
  };
  for (size_t i = 0; i < params.size(); ++i) {
    if (depth_of(i, depth_of) > max_depth && params[i].condition) {
      d->Error("search_space." + params[i].name + ".condition",
               OverLimit(depth[i], "parameters in a chain of conditions", max_depth,
                         "max_condition_depth"));
      params[i].condition.reset();
    }
  }
  std::vector<ParamSpec> ordered;
  std::vector<bool> emitted(params.size(), false);
  const auto emit = [&](size_t i, const auto& self) -> void {
    if (emitted[i]) return;
    emitted[i] = true;
    if (const long parent = parent_of(i); parent >= 0) self(static_cast<size_t>(parent), self);
    ordered.push_back(params[i]);
  };
  for (size_t i = 0; i < params.size(); ++i) emit(i, emit);
  return ordered;
}

}  // namespace

void ReadValues(const YAML::Node& node, const std::string& path, bool allow_scalar, Diagnostics* d,
                std::vector<ParamValue>* out) {
  if (allow_scalar && node.IsScalar()) {
    out->push_back(yamlcfg::InferParamValue(node));
    return;
  }
  if (!node.IsSequence()) {
    d->Error(path, "must be a list of values, got " + yamlcfg::Describe(node));
    return;
  }
  for (const auto& item : node) {
    if (!item.IsScalar()) {
      d->Error(path, "each entry must be a single value, got " + yamlcfg::Describe(item));
      continue;
    }
    out->push_back(yamlcfg::InferParamValue(item));
  }
}

void ParseSearchSpace(MapReader& top, const ConfigLimits& limits, Diagnostics* d,
                      search::SearchSpace* out, std::set<std::string>* broken) {
  const YAML::Node node = top.Get("search_space");
  if (!node.IsDefined()) {
    d->Error("search_space", "missing; a map of parameter name -> {type, low, high, ...}");
    return;
  }
  MapReader r(node, "search_space", d);
  if (!r.ok()) return;
  const auto entries = r.Entries();
  if (entries.size() > limits.max_parameters) {
    d->Error("search_space",
             OverLimit(entries.size(), "parameters", limits.max_parameters, "max_parameters"));
    return;
  }
  std::vector<ParamSpec> params;
  for (const auto& [name, value] : entries) {
    bool is_broken = false;
    params.push_back(ParseParam(name, value, limits, d, &is_broken));
    if (is_broken) broken->insert(name);
  }
  *out = search::SearchSpace(OrderByCondition(std::move(params), limits.max_condition_depth, d));
  // What Validate says of a field that did not parse, or of a condition on a parameter that did
  // not, is noise: the cause already has its error.
  std::set<std::string> noise;
  for (const auto& p : out->params()) {
    if (broken->count(p.name)) {
      noise.insert(p.name + ".");
      noise.insert(p.name + ":");
    } else if (p.condition && broken->count(p.condition->parent)) {
      noise.insert(p.name + ".condition:");
    }
  }
  std::set<std::string> invalid;
  for (const auto& e : out->Validate()) {
    const auto starts = [&](const std::string& prefix) { return e.rfind(prefix, 0) == 0; };
    if (std::any_of(noise.begin(), noise.end(), starts)) continue;
    d->ErrorUnder("search_space", e);
    for (const auto& p : out->params()) {
      if (starts(p.name + ".") || starts(p.name + ":")) invalid.insert(p.name);
    }
  }
  broken->insert(invalid.begin(), invalid.end());
}

}  // namespace sift::common

#include "common/config/config_objectives.h"

#include <iterator>
#include <map>
#include <utility>

#include "common/config/config_objective.h"
#include "common/metric_names.h"

namespace sift::common {
namespace {

using yamlcfg::Describe;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

constexpr size_t kMinObjectives = 2;
constexpr size_t kMaxObjectives = 4;

std::string List(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// Reads `metric` from an entry of a list; false (with an error) when it is missing, malformed,
// or not a metric the trial can have. A built-in trial has the trainer's and Sift's own.
bool ReadMetric(MapReader& r, Diagnostics* d, bool any_metric, const std::string& task,
                std::string* metric) {
  const std::string path = r.PathOf("metric");
  if (!r.Has("metric")) {
    r.Get("metric");
    d->Error(path, "missing; name a metric the trial reports or one Sift measures (" +
                       List({std::begin(kMeasuredMetrics), std::end(kMeasuredMetrics)}) + ")");
    return false;
  }
  if (!r.String("metric", metric)) return false;
  if (metric->empty()) {
    d->Error(path, "must not be empty");
    return false;
  }
  if (!any_metric && !IsBuiltinObjective(*metric) && !IsMeasuredMetric(*metric)) {
    const std::vector<std::string> reported(std::begin(kObjectiveMetrics),
                                            std::end(kObjectiveMetrics));
    const std::vector<std::string> measured(std::begin(kMeasuredMetrics),
                                            std::end(kMeasuredMetrics));
    std::vector<std::string> known = reported;
    known.insert(known.end(), measured.begin(), measured.end());
    std::string problem = "unknown metric '" + *metric + "'";
    if (std::string s = yamlcfg::Suggest(*metric, known); !s.empty()) {
      problem += " (did you mean '" + s + "'?)";
    }
    d->Error(path, problem + "; the trainer reports " + List(reported) + ", and Sift measures " +
                       List(measured));
    return false;
  }
  const size_t errors = d->count();
  CheckMetricForTask(d, path, *metric, task);
  return d->count() == errors;
}

// Sift knows which way its own metrics and the trainer's are better; a program's are its own.
bool Known(const std::string& metric) {
  return IsBuiltinObjective(metric) || IsMeasuredMetric(metric);
}

// Calls `read(reader, path)` for each entry of `list` that is a map, at path "key[i]".
template <typename Read>
void EachEntry(const YAML::Node& list, const std::string& key, Diagnostics* d, Read read) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = key + "[" + std::to_string(i) + "]";
    d->NoteLine(path, list[i]);
    MapReader r(list[i], path, d);
    if (r.ok()) read(r, path);
  }
}

}  // namespace

void ParseObjectives(MapReader& top, Diagnostics* d, bool any_metric, const std::string& task,
                     std::vector<search::Objective>* out) {
  const YAML::Node list = top.Get("objectives");
  if (top.Has("objective")) {
    // objective: {target: X} beside a list is a target for no one objective in particular.
    const YAML::Node single = top.Get("objective");
    if (single.IsMap() && single.size() == 1 && single["target"].IsDefined()) {
      d->Error("objective.target",
               "a target is for a single objective; with objectives: the "
               "result is a Pareto set, not one value to reach");
    } else {
      d->Error("objectives", "give either objective: (one) or objectives: (2 to 4), not both");
    }
  }
  if (!list.IsSequence()) {
    d->Error("objectives", "must be a list of 2 to 4 {metric, direction}, got " + Describe(list));
    return;
  }
  if (list.size() < kMinObjectives || list.size() > kMaxObjectives) {
    d->Error("objectives", "lists " + std::to_string(list.size()) + "; give 2 to 4 (a single " +
                               "one is objective: {metric, direction})");
  }
  std::map<std::string, std::string> seen;  // metric -> the entry that names it
  EachEntry(list, "objectives", d, [&](MapReader& r, const std::string& path) {
    search::Objective o;
    if (ReadMetric(r, d, any_metric, task, &o.metric)) {
      ReadDirection(r, d, Known(o.metric), /*judge=*/true, &o);
      if (auto [it, fresh] = seen.emplace(o.metric, path); !fresh) {
        d->Error(r.PathOf("metric"), o.metric + " is already " + it->second);
      } else {
        out->push_back(o);
      }
    } else {
      r.Get("direction");
    }
    if (r.Has("target")) {
      r.Get("target");
      d->Error(r.PathOf("target"),
               "a target is for a single objective (objective.target); "
               "several have a Pareto set, not one value to reach");
    }
    r.RejectUnknown();
  });
}

void ParseConstraints(MapReader& top, Diagnostics* d, bool any_metric, const std::string& task,
                      std::vector<search::Constraint>* out) {
  const YAML::Node list = top.Get("constraints");
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    d->Error("constraints",
             "must be a list of {metric, max: X} or {metric, min: X}, got " + Describe(list));
    return;
  }
  std::map<std::pair<std::string, bool>, std::string> seen;  // (metric, upper) -> its entry
  EachEntry(list, "constraints", d, [&](MapReader& r, const std::string& path) {
    search::Constraint c;
    const bool metric_ok = ReadMetric(r, d, any_metric, task, &c.metric);
    const bool has_max = r.Has("max");
    const bool has_min = r.Has("min");
    c.upper = has_max;
    bool bound_ok = false;
    if (has_max && has_min) {
      r.Get("max");
      r.Get("min");
      d->Error(path, "give max or min, not both (a range is two constraints)");
    } else if (!has_max && !has_min) {
      d->Error(path, "missing max or min: a constraint is {metric, max: X} or {metric, min: X}");
    } else {
      bound_ok = r.Double(has_max ? "max" : "min", &c.bound);
    }
    // Sift's own measures are never negative: a maximum below 0 holds for no trial.
    if (metric_ok && bound_ok && c.upper && c.bound < 0 && IsMeasuredMetric(c.metric)) {
      d->Error(r.PathOf("max"), "must be >= 0 for " + c.metric + ", which is never negative");
      bound_ok = false;
    }
    r.RejectUnknown();
    if (!metric_ok || !bound_ok) return;
    const char* side = c.upper ? "max" : "min";
    if (auto [it, fresh] = seen.emplace(std::make_pair(c.metric, c.upper), path); !fresh) {
      d->Error(r.PathOf(side), "a second " + std::string(side) + " for " + c.metric + " (" +
                                   it->second + " has one)");
      return;
    }
    out->push_back(c);
  });
}

}  // namespace sift::common

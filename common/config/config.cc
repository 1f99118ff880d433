#include "common/config/config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "common/config/config_cost.h"
#include "common/config/config_enqueue.h"
#include "common/config/config_model_files.h"
#include "common/config/config_pbt.h"
#include "common/config/config_startup.h"
#include "common/config/config_trial.h"
#include "common/config/config_yaml.h"
#include "common/data/data_spec.h"
#include "common/data/validate.h"
#include "common/data_files.h"
#include "common/hparams/hparams.h"
#include "common/metric_names.h"
#include "search/factory.h"
#include "search/space.h"

namespace sift::coordinator {
namespace {

using search::Params;
using search::ParamSpec;
using search::ParamType;
using search::ParamValue;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

std::string Num(double v) { return search::ToString(ParamValue(v)); }

// The size of a list that ReadValues would read, checked before it reads it.
bool WithinLimit(const YAML::Node& node, const std::string& path, const char* what, size_t limit,
                 const char* name, Diagnostics* d) {
  if (!node.IsSequence() || node.size() <= limit) return true;
  d->Error(path, OverLimit(node.size(), what, limit, name));
  return false;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Bound checks shared by every section: "budget.max_trials: must be >= 1, got 0".
void AtLeast(Diagnostics* d, const std::string& path, int64_t value, int64_t min) {
  if (value < min) {
    d->Error(path, "must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
}
void AtLeast(Diagnostics* d, const std::string& path, double value, double min) {
  if (value < min) d->Error(path, "must be >= " + Num(min) + ", got " + Num(value));
}

bool ValidStudyName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

std::string NotAnHParam(const std::string& name) {
  // Settings users look for under trainer: that live elsewhere in a Sift config.
  static const std::map<std::string, std::string> elsewhere = {
      {"epochs", "budget.max_epochs"},     {"max_epochs", "budget.max_epochs"},
      {"num_epochs", "budget.max_epochs"}, {"n_epochs", "budget.max_epochs"},
      {"trials", "budget.max_trials"},     {"max_trials", "budget.max_trials"},
      {"seed", "seed (at the top level)"}};
  if (auto it = elsewhere.find(name); it != elsewhere.end()) {
    return "not a trainer hyperparameter; set it as " + it->second;
  }
  std::string problem = "not a trainer hyperparameter";
  const std::string s = yamlcfg::Suggest(name, common::KnownHParamNames());
  if (!s.empty()) problem += "; did you mean '" + s + "'?";
  return problem + " (known: " + JoinNames(common::KnownHParamNames()) + ")";
}

// model: torchscript takes any other name too: an attribute of the module, or a name its path
// uses (the worker checks it against the module).
bool IsTorchScript(const Params& fixed) {
  const auto it = fixed.find("model");
  return it != fixed.end() && search::ToString(it->second) == "torchscript";
}

bool IsKnownHParam(const std::string& name) {
  const auto& known = common::KnownHParamNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

// ---- name, objective -------------------------------------------------------------------------

void ParseName(MapReader& top, Diagnostics* d, std::string* out) {
  if (!top.Has("name")) {
    top.Get("name");
    d->Error("name", "missing; give the study a name matching [A-Za-z0-9_.-]{1,64}");
    return;
  }
  std::string name;
  if (!top.String("name", &name)) return;
  if (!ValidStudyName(name)) {
    d->Error("name", "must match [A-Za-z0-9_.-]{1,64}, got '" + name + "'");
    return;
  }
  *out = name;
}

// `any_metric`: a command trial, whose program may report metrics of its own; the direction of
// one Sift does not know must be given.
void ParseObjective(MapReader& top, Diagnostics* d, search::Objective* out, bool any_metric,
                    std::optional<double>* target) {
  MapReader r(top.Get("objective"), "objective", d);
  // The value the forecast reports the dollars and time to reach (and `sift report --target`).
  if (double t = 0; r.Double("target", &t)) *target = t;
  const bool metric_given = r.Has("metric");
  bool metric_ok = false;
  if (any_metric && metric_given) {
    metric_ok = r.String("metric", &out->metric);
    if (metric_ok && out->metric.empty()) d->Error("objective.metric", "must not be empty");
    if (metric_ok && !out->metric.empty() && !common::IsBuiltinObjective(out->metric)) {
      std::string direction;
      if (r.Enum("direction", {"maximize", "minimize"}, &direction)) {
        out->maximize = direction == "maximize";
      } else if (!r.Has("direction")) {
        d->Error("objective.direction", "missing; say maximize or minimize for the program's "
                                        "own metric '" + out->metric + "'");
      }
      r.RejectUnknown();
      return;
    }
  } else {
    metric_ok = r.Enum("metric", {std::begin(common::kObjectiveMetrics),
                                  std::end(common::kObjectiveMetrics)},
                       &out->metric);
  }
  // A loss or an error is minimised unless said otherwise; maximising one is always a mistake.
  const bool is_loss = !common::HigherIsBetter(out->metric);
  out->maximize = !is_loss;
  std::string direction;
  if (r.Enum("direction", {"maximize", "minimize"}, &direction)) {
    out->maximize = direction == "maximize";
    if ((metric_ok || !metric_given) && out->maximize == is_loss) {
      d->Error("objective.direction", "must be " + std::string(is_loss ? "minimize" : "maximize") +
                                          " for " + out->metric + ", got '" + direction + "'");
    }
  }
  r.RejectUnknown();
}

// Regression data scores by val_rmse (minimised) unless the objective says otherwise; a metric
// of the other task is an error when the task is stated.
void CheckObjectiveForTask(MapReader& top, Diagnostics* d, const std::string& task,
                           search::Objective* objective) {
  const YAML::Node node = top.Get("objective");
  const bool metric_given = node.IsMap() && node["metric"].IsDefined();
  if (task == "regression" && !metric_given) {
    objective->metric = "val_rmse";
    objective->maximize = false;
  }
  if (task == "regression" && common::IsClassificationMetric(objective->metric)) {
    d->Error("objective.metric", objective->metric + " is for classification; data.task is "
                                 "regression (use val_rmse, val_mae or val_r2)");
  } else if (task == "classification" && common::IsRegressionMetric(objective->metric)) {
    d->Error("objective.metric", objective->metric + " is for regression; data.task is "
                                 "classification (use val_accuracy, val_balanced_accuracy, "
                                 "val_macro_f1, val_roc_auc or val_loss)");
  }
}

// ---- search_space ------------------------------------------------------------------------------

// A list of scalars (or, when `allow_scalar`, one scalar) as typed values.
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
    } else if (WithinLimit(choices, path + ".choices", "choices", limits.max_choices,
                           "max_choices", d)) {
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

// Parses search_space into `out`. `broken` collects the parameters found faulty, whose values are
// then not checked against the trainer.
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
    d->Error("search_space", OverLimit(entries.size(), "parameters", limits.max_parameters,
                                       "max_parameters"));
    return;
  }
  std::vector<ParamSpec> params;
  for (const auto& [name, value] : entries) {
    bool is_broken = false;
    params.push_back(ParseParam(name, value, limits, d, &is_broken));
    if (is_broken) broken->insert(name);
  }
  *out = search::SearchSpace(
      OrderByCondition(std::move(params), limits.max_condition_depth, d));
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

// ---- trainer -----------------------------------------------------------------------------------

// Fixed trainer settings. Every bad one is reported: the trainer names the first problem, so
// each round drops the setting it named and asks again. Returns the settings that passed.
Params ParseTrainer(MapReader& top, Diagnostics* d, Params* all) {
  Params valid;
  MapReader r(top.Get("trainer"), "trainer", d);
  const auto entries = r.Entries();
  const bool torchscript = std::any_of(entries.begin(), entries.end(), [](const auto& e) {
    return e.first == "model" && e.second.IsScalar() && e.second.Scalar() == "torchscript";
  });
  for (const auto& [name, value] : entries) {
    const std::string path = "trainer." + name;
    if (!value.IsScalar()) {
      d->Error(path, "must be a single value, got " + yamlcfg::Describe(value));
    } else if (!IsKnownHParam(name) && !torchscript) {
      d->Error(path, NotAnHParam(name));
    } else {
      valid[name] = yamlcfg::InferParamValue(value);
    }
  }
  *all = valid;
  while (!valid.empty()) {
    common::HParams hp;
    const std::string e = common::ParseHParams(valid, &hp);
    if (e.empty()) break;
    d->ErrorUnder("trainer", e);
    const std::string named = e.substr(0, e.find(':'));
    if (valid.erase(named) == 0) {
      valid.clear();  // a problem with no setting to blame: trust none of them
    }
  }
  return valid;
}

// A command trial's fixed parameters (under `trainer:`): any names, single values, passed to the
// program as they are.
Params ParseCommandParams(MapReader& top, Diagnostics* d, Params* all) {
  MapReader r(top.Get("trainer"), "trainer", d);
  for (const auto& [name, value] : r.Entries()) {
    if (!value.IsScalar()) {
      d->Error("trainer." + name, "must be a single value, got " + yamlcfg::Describe(value));
    } else {
      (*all)[name] = yamlcfg::InferParamValue(value);
    }
  }
  return *all;
}

void CheckSpaceAgainstFixed(const search::SearchSpace& space, const Params& fixed,
                            Diagnostics* d) {
  for (const auto& p : space.params()) {
    if (fixed.count(p.name)) {
      d->Error("search_space." + p.name, "also fixed under trainer; set it in one place");
    }
  }
}

// What the trainer says of `base` with `name` set to `value`, without the leading "name: ".
std::string TrainerProblem(const Params& base, const std::string& name, const ParamValue& value) {
  Params params = base;
  params[name] = value;
  common::HParams hp;
  std::string e = common::ParseHParams(params, &hp);
  if (e.rfind(name + ": ", 0) == 0) e.erase(0, name.size() + 2);
  return e;
}

// Every searched name must be a trainer hyperparameter that is not also fixed, and every value
// the space can produce (bounds, choices) must be one the trainer accepts.
void CheckSpaceAgainstTrainer(const search::SearchSpace& space, const std::set<std::string>& broken,
                              const Params& fixed, const Params& base, Diagnostics* d) {
  for (const auto& p : space.params()) {
    const std::string path = "search_space." + p.name;
    if (!IsKnownHParam(p.name) && IsTorchScript(fixed)) continue;
    if (!IsKnownHParam(p.name)) {
      d->Error(path, NotAnHParam(p.name));
      continue;
    }
    if (fixed.count(p.name)) {
      d->Error(path, "also fixed under trainer; set it in one place");
      continue;
    }
    if (broken.count(p.name)) continue;
    const auto report = [&](const std::string& field, const std::string& problem) {
      if (!problem.empty()) d->Error(path + "." + field, problem);
    };
    if (p.type == ParamType::kCategorical) {
      for (const auto& choice : p.choices) report("choices", TrainerProblem(base, p.name, choice));
      continue;
    }
    bool bounds_ok = true;
    for (const auto& [field, bound] : {std::pair{"low", p.low}, std::pair{"high", p.high}}) {
      if (!std::isfinite(bound) || (p.type == ParamType::kInt && (bound != std::floor(bound) ||
                                                                   !search::IntBoundInRange(bound)))) {
        bounds_ok = false;  // SearchSpace::Validate reported it
        continue;
      }
      const ParamValue v =
          p.type == ParamType::kInt ? ParamValue(static_cast<int64_t>(bound)) : ParamValue(bound);
      const std::string problem = TrainerProblem(base, p.name, v);
      report(field, problem);
      bounds_ok = bounds_ok && problem.empty();
    }
    // A float parameter for an integer setting passes at whole-number bounds, so probe between.
    if (bounds_ok && p.type == ParamType::kFloat && p.high > p.low) {
      const double between = std::nextafter(p.low, p.high);
      if (between != std::floor(between) && !TrainerProblem(base, p.name, between).empty()) {
        report("type", "the trainer takes whole numbers for '" + p.name + "'; use type: int");
      }
    }
  }
}

// ---- searcher, scheduler -----------------------------------------------------------------------

// Nested maps flatten with dots: {tpe: {gamma: 0.2}} -> "tpe.gamma".
void FlattenOption(const YAML::Node& node, const std::string& section, const std::string& key,
                   Diagnostics* d, search::Options* out) {
  const std::string path = section + "." + key;
  if (node.IsMap()) {
    MapReader r(node, path, d);
    for (const auto& [sub, value] : r.Entries()) {
      FlattenOption(value, section, key + "." + sub, d, out);
    }
  } else if (node.IsScalar()) {
    (*out)[key] = yamlcfg::InferOptionValue(node);
  } else if (node.IsSequence()) {  // [0.8, 1.2] -> key.0, key.1 (search::OptionReader::List)
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string item = key + "." + std::to_string(i);
      d->NoteLine(section + "." + item, node[i]);
      if (node[i].IsScalar()) {
        (*out)[item] = yamlcfg::InferOptionValue(node[i]);
      } else {
        d->Error(section + "." + item, "must be a single value, got " + yamlcfg::Describe(node[i]));
      }
    }
  } else {
    d->Error(path, "must be a single value, a list or a map, got " + yamlcfg::Describe(node));
  }
}

// searcher: {type: random, ...options} or just `searcher: random`.
void ParseAlgorithm(MapReader& top, const std::string& section, Diagnostics* d,
                    AlgorithmConfig* out) {
  const YAML::Node node = top.Get(section);
  if (!node.IsDefined() || node.IsNull()) return;
  if (node.IsScalar()) {
    out->type = node.Scalar();
    return;
  }
  MapReader r(node, section, d);
  for (const auto& [key, value] : r.Entries()) {
    if (key != "type") {
      FlattenOption(value, section, key, d, &out->options);
    } else if (value.IsScalar()) {
      out->type = value.Scalar();
    } else {
      d->Error(section + ".type", "must be a name, got " + yamlcfg::Describe(value));
    }
  }
}

// ---- budget, data, worker and the rest ---------------------------------------------------------

void ParseBudget(MapReader& top, Diagnostics* d, BudgetConfig* b) {
  MapReader r(top.Get("budget"), "budget", d);
  if (r.Int("max_trials", &b->max_trials)) AtLeast(d, "budget.max_trials", b->max_trials, 1);
  if (r.Int("max_epochs", &b->max_epochs)) AtLeast(d, "budget.max_epochs", b->max_epochs, 1);
  if (r.Double("max_dollars", &b->max_dollars)) {
    AtLeast(d, "budget.max_dollars", b->max_dollars, 0.0);
  }
  if (r.Double("max_hours", &b->max_hours)) AtLeast(d, "budget.max_hours", b->max_hours, 0.0);
  r.RejectUnknown();
}

// A data file: a path, or for npy {x: features.npy, y: labels.npy}, or for idx
// {images: ...-idx3-ubyte.gz, labels: ...-idx1-ubyte.gz}.
void ParseFileRef(MapReader& r, const std::string& key, Diagnostics* d, data::FileRef* out) {
  const YAML::Node node = r.Get(key);
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = r.PathOf(key);
  if (node.IsScalar()) {
    out->path = node.Scalar();
  } else if (node.IsMap() && (node["images"] || node["labels"])) {
    MapReader files(node, path, d);
    if (!files.String("images", &out->path)) {
      d->Error(path + ".images", "missing; the images' IDX file");
    }
    if (!files.String("labels", &out->labels)) {
      d->Error(path + ".labels", "missing; the labels' IDX file");
    }
    files.RejectUnknown();
  } else if (node.IsMap()) {
    MapReader files(node, path, d);
    if (!files.String("x", &out->path)) d->Error(path + ".x", "missing; the features' .npy file");
    if (!files.String("y", &out->labels)) d->Error(path + ".y", "missing; the labels' .npy file");
    files.RejectUnknown();
  } else {
    d->Error(path, "must be a file path, {x: features.npy, y: labels.npy} or {images: ..., "
                   "labels: ...} (idx), got " + yamlcfg::Describe(node));
    return;
  }
  if (out->path.empty()) d->Error(path, "must not be empty");
}

void ParseData(MapReader& top, Diagnostics* d, data::DataSpec* data) {
  const size_t errors_before = d->count();
  MapReader r(top.Get("data"), "data", d);
  r.Enum("format", {"idx", "csv", "npy", "npz"}, &data->format);
  if (r.String("dir", &data->dir) && data->dir.empty()) d->Error("data.dir", "must not be empty");
  if (r.Int("train_limit", &data->train_limit)) {
    AtLeast(d, "data.train_limit", data->train_limit, 0);
  }
  if (r.Int("val_size", &data->val_size)) AtLeast(d, "data.val_size", data->val_size, 1);
  if (r.Int("test_limit", &data->test_limit)) AtLeast(d, "data.test_limit", data->test_limit, 0);
  for (auto [key, ref] : {std::pair{"file", &data->file}, {"train", &data->train},
                          {"val", &data->val}, {"test", &data->test}}) {
    ParseFileRef(r, key, d, ref);
  }
  if (r.Has("split")) {
    MapReader split(r.Get("split"), "data.split", d);
    split.Double("val", &data->split.val);
    split.Double("test", &data->split.test);
    split.UInt64("seed", &data->split.seed);
    split.RejectUnknown();
    // `train:` alone with `split:` is the one-file form under another name: split it.
    const bool other_files = !data->val.empty() || !data->test.empty();
    if (data->file.empty() && !data->train.empty() && !other_files) {
      data->file = std::exchange(data->train, data::FileRef{});
    } else if (data->file.empty() && other_files) {
      d->Error("data.split", "splits one file (data.file); with separate train and val files "
                             "there is nothing to split (drop data.split)");
    }
  }
  r.Enum("task", {"classification", "regression"}, &data->task);
  r.String("label", &data->label);
  if (const YAML::Node features = r.Get("features"); features.IsDefined() && !features.IsNull()) {
    std::vector<ParamValue> names;
    ReadValues(features, "data.features", /*allow_scalar=*/true, d, &names);
    for (const auto& n : names) data->features.push_back(search::ToString(n));
  }
  r.Enum("missing", {"error", "mean"}, &data->missing);
  if (r.Enum("standardize", {"true", "false", "features", "target", "both", "none"},
             &data->standardize)) {
    if (data->standardize == "true") data->standardize = "both";
    if (data->standardize == "false") data->standardize = "none";
  }
  if (r.Has("arrays")) {
    MapReader arrays(r.Get("arrays"), "data.arrays", d);
    arrays.String("x", &data->x_key);
    arrays.String("y", &data->y_key);
    arrays.RejectUnknown();
  }
  r.RejectUnknown();
  // What needs no file read: formats, file combinations, split fractions (`sift validate` and
  // the run then read the files too: ValidateData).
  if (errors_before == d->count()) {
    for (const auto& e : data::CheckDataSpec(*data)) d->ErrorUnder("", e);
  }
}

void ParseWorker(MapReader& top, Diagnostics* d, WorkerConfig* w) {
  MapReader r(top.Get("worker"), "worker", d);
  if (r.String("instance_type", &w->instance_type) && w->instance_type.empty()) {
    d->Error("worker.instance_type", "must not be empty");
  }
  r.Enum("market", {"on-demand", "spot"}, &w->market);
  if (r.Double("price_per_hour", &w->price_per_hour)) {
    AtLeast(d, "worker.price_per_hour", w->price_per_hour, 0.0);
  }
  if (r.Int("threads", &w->threads)) AtLeast(d, "worker.threads", w->threads, 0);
  r.RejectUnknown();
}

void ParseCheckpoint(MapReader& top, Diagnostics* d, CheckpointConfig* c) {
  MapReader r(top.Get("checkpoint"), "checkpoint", d);
  if (r.Int("every_epochs", &c->every_epochs)) {
    AtLeast(d, "checkpoint.every_epochs", c->every_epochs, 1);
  }
  r.Enum("keep", {"all", "latest", "best"}, &c->keep);
  r.RejectUnknown();
}

std::string SyntaxError(const std::string& origin, const YAML::Mark& mark,
                        const std::string& message) {
  std::string out = origin.empty() ? "config" : origin;
  if (mark.line >= 0) {
    out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return out + ": " + message;
}

}  // namespace

std::string OverLimit(size_t found, const std::string& what, size_t limit, const char* name) {
  return std::to_string(found) + " " + what + ", over the limit of " + std::to_string(limit) +
         " (" + name + ")";
}

std::string ConfigDir(const std::string& config_path) {
  if (config_path.empty()) return "";
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(config_path, ec);
  return ec ? "" : absolute.parent_path().lexically_normal().string();
}

std::vector<std::string> ParseStudyConfig(const std::string& text, const std::string& origin,
                                          StudyConfig* out, const ConfigLimits& limits,
                                          const std::string& base_dir) {
  const std::string where = origin.empty() ? "config" : origin;
  if (text.size() > limits.max_bytes) {
    return {where + ": " + OverLimit(text.size(), "bytes", limits.max_bytes, "max_bytes")};
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard, far past max_depth, says only "bad file".
    return {where + ":" + std::to_string(e.mark.line + 1) +
            ": maps and lists nested too deep for the YAML parser, over the limit of " +
            std::to_string(limits.max_depth) + " levels (max_depth)"};
  } catch (const YAML::Exception& e) {
    return {SyntaxError(origin, e.mark, e.msg)};
  }
  int line = 0;
  if (const std::string e = yamlcfg::CheckShape(root, limits, &line); !e.empty()) {
    return {where + ":" + std::to_string(line) + ": " + e};
  }
  Diagnostics d;
  StudyConfig cfg;
  MapReader top(root, "", &d);
  if (!top.ok()) return d.Format(limits.max_errors);

  ParseName(top, &d, &cfg.name);
  ParseTrial(top, origin, &d, &cfg.trial);
  // A command trial's parameters and metrics are its program's: any names, no trainer checks.
  const bool command = top.Has("trial");
  ParseObjective(top, &d, &cfg.objective, command, &cfg.target);
  const Params valid_fixed = command ? ParseCommandParams(top, &d, &cfg.fixed)
                                     : ParseTrainer(top, &d, &cfg.fixed);
  // A model file, like a data file, is named relative to the config's folder.
  for (const char* key : {"path", "init_from"}) {
    auto it = cfg.fixed.find(key);
    if (command || base_dir.empty() || it == cfg.fixed.end()) continue;
    if (auto* p = std::get_if<std::string>(&it->second);
        p && !p->empty() && !std::filesystem::path(*p).is_absolute()) {
      *p = (std::filesystem::path(base_dir) / *p).lexically_normal().string();
    }
  }
  std::set<std::string> broken;
  const size_t errors_before_space = d.count();
  ParseSearchSpace(top, limits, &d, &cfg.space, &broken);
  if (command) {
    CheckSpaceAgainstFixed(cfg.space, cfg.fixed, &d);
  } else {
    if (cfg.space.size() > 0) {
      CheckSpaceAgainstTrainer(cfg.space, broken, cfg.fixed, valid_fixed, &d);
    }
    for (const auto& e : CheckModelPath(cfg.fixed, cfg.space)) d.ErrorUnder("trainer", e);
  }
  // Any error under search_space, the trainer check's included, makes the space unusable.
  const bool space_ok = d.count() == errors_before_space;
  ParseAlgorithm(top, "searcher", &d, &cfg.searcher);
  ParseAlgorithm(top, "scheduler", &d, &cfg.scheduler);
  ParseBudget(top, &d, &cfg.budget);
  if (top.Int("parallelism", &cfg.parallelism)) AtLeast(&d, "parallelism", cfg.parallelism, 0);
  top.UInt64("seed", &cfg.seed);
  if (command && top.Has("data")) {
    d.Error("data", "a command trial reads its own data; pass its paths in trial.command");
    top.Get("data");
  } else if (!command) {
    ParseData(top, &d, &cfg.data);
    data::ResolveRelativePaths(&cfg.data, base_dir);
    CheckObjectiveForTask(top, &d, cfg.data.task, &cfg.objective);
  }
  ParseWorker(top, &d, &cfg.worker);
  ParseCheckpoint(top, &d, &cfg.checkpoint);
  if (space_ok) {
    ParseEnqueue(top, &d, &cfg);
  } else {
    top.Get("enqueue");  // judged once the space is
  }
  ParseTags(top, &d, &cfg.tags);
  ParseAlerts(top, &d, &cfg.alerts);
  top.RejectUnknown();

  // The factories are the judges of algorithm options, so `sift validate` and a running study
  // agree, and new searchers and schedulers need nothing here.
  std::vector<std::string> errors;
  FitRandomStartToBudget(&cfg);
  if (space_ok) {
    search::MakeSearcher(cfg.searcher.type, cfg.searcher.options, cfg.space, &errors);
    for (const auto& e : errors) d.ErrorUnder("searcher", e);
  }
  errors.clear();
  const search::SchedulerContext context{cfg.budget.max_epochs, cfg.objective.maximize};
  search::MakeScheduler(cfg.scheduler.type, cfg.scheduler.options, context, &errors);
  for (const auto& e : errors) d.ErrorUnder("scheduler", e);
  if (cfg.scheduler.type == "pbt") {
    const YAML::Node budget = static_cast<const YAML::Node&>(root)["budget"];
    if (space_ok) CheckPbt(budget.IsMap() && budget["max_trials"].IsDefined(), &d, &cfg);
    // Gated until the coordinator carries out exploits and the worker applies the new values.
    d.Error("scheduler.type", "pbt is not runnable yet: the coordinator does not copy "
                              "checkpoints between members; `sift validate` checks its options");
  }

  *out = std::move(cfg);
  return d.Format(limits.max_errors);
}

std::vector<std::string> ValidateStudyData(const StudyConfig& config, std::string* summary) {
  if (config.trial.is_command()) {  // the program reads its own data; it must be there to run
    if (summary != nullptr) *summary = "read by the program (trial.command)";
    const std::string problem = CheckCommandProgram(config.trial);
    if (problem.empty()) return {};
    return {problem};
  }
  // A missing data set is one line naming the folder, not one per file it should hold.
  if (config.data.uses_dir()) {
    if (std::string p = data::CheckSourceFilesPresent(config.data); !p.empty()) return {p};
  }
  data::DataSummary data;
  std::vector<std::string> errors = data::ValidateData(config.data, &data);
  for (auto& e : MissingModelFiles(config.fixed, config.space)) errors.push_back(std::move(e));
  if (!errors.empty()) return errors;
  if (summary != nullptr) *summary = data.text;
  const std::string& metric = config.objective.metric;
  if (data.task == "regression" && common::IsClassificationMetric(metric)) {
    errors.push_back("objective.metric: " + metric + ", but the label is a regression target "
                     "(many distinct numbers); set objective: {metric: val_rmse}, or data.task: "
                     "classification");
  } else if (data.task == "classification" && common::IsRegressionMetric(metric) &&
             !data.text_class.empty()) {
    errors.push_back("objective.metric: " + metric + " is a regression metric, but the label's "
                     "classes are text ('" + data.text_class + "'); set objective: {metric: "
                     "val_accuracy} (or another classification metric)");
  } else if (data.task == "classification" && common::IsRegressionMetric(metric)) {
    errors.push_back("objective.metric: " + metric + " is for regression, but the label looks "
                     "like a class (few distinct integers); set objective: {metric: "
                     "val_accuracy}, or data.task: regression if the integers are amounts");
  } else if (metric == common::kValRocAuc && data.classes != 2) {
    errors.push_back("objective.metric: val_roc_auc is for two classes, the label has " +
                     std::to_string(data.classes) + "; use val_macro_f1 or "
                     "val_balanced_accuracy");
  }
  common::HParams hp;
  if (data.task == "classification" && common::ParseHParams(config.fixed, &hp).empty() &&
      hp.loss != "mse") {
    errors.push_back("trainer.loss: " + hp.loss + " is for regression; a classification study "
                     "trains on cross-entropy (drop trainer.loss, or set data.task: regression)");
  }
  return errors;
}

std::vector<std::string> LoadStudyConfig(const std::string& path, StudyConfig* out,
                                         std::string* text, const ConfigLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return {path + ": cannot read (is a directory)"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {path + ": cannot read (" + std::strerror(errno) + ")"};
  // Reading stops one chunk past the limit (a /dev/zero never ends).
  std::string contents;
  char chunk[1 << 16];
  while (contents.size() <= limits.max_bytes &&
         in.read(chunk, sizeof(chunk)).gcount() > 0) {
    contents.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return {path + ": cannot read (" + std::strerror(errno) + ")"};
  if (contents.size() > limits.max_bytes) {
    return {path + ": over the limit of " + std::to_string(limits.max_bytes) +
            " bytes (max_bytes)"};
  }
  std::vector<std::string> errors = ParseStudyConfig(contents, path, out, limits, ConfigDir(path));
  // A config without `name:` is named after its file (houses.yaml: houses), as the config a
  // user writes first often is. The name is appended to the text, so the text the study stores
  // (and a coordinator restores) names it too; a text that cannot take an appended key (a flow
  // map, JSON) keeps its "name: missing".
  if (!errors.empty() && errors[0].rfind("name: missing", 0) == 0) {
    std::string named = contents;
    if (!named.empty() && named.back() != '\n') named += '\n';
    named += "name: " + DefaultStudyName(path) + "\n";
    StudyConfig retry;
    auto retry_errors = ParseStudyConfig(named, path, &retry, limits, ConfigDir(path));
    if (retry_errors.size() + 1 == errors.size()) {
      errors = std::move(retry_errors);
      contents = std::move(named);
      *out = std::move(retry);
    }
  }
  if (text != nullptr) *text = std::move(contents);
  return errors;
}

std::string DefaultStudyName(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (!ok) c = '-';
  }
  if (name.size() > 64) name.resize(64);
  return name.empty() ? "study" : name;
}

}  // namespace sift::coordinator

#include "common/config/config_trainer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "common/hparams/hparams.h"

namespace sift::common {

using search::Params;
using search::ParamType;
using search::ParamValue;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
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

// What the trainer says of `base` with `name` set to `value`, without the leading "name: ".
std::string TrainerProblem(const Params& base, const std::string& name, const ParamValue& value) {
  Params params = base;
  params[name] = value;
  common::HParams hp;
  std::string e = common::ParseHParams(params, &hp);
  if (e.rfind(name + ": ", 0) == 0) e.erase(0, name.size() + 2);
  return e;
}

}  // namespace

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

void CheckSpaceAgainstFixed(const search::SearchSpace& space, const Params& fixed, Diagnostics* d) {
  for (const auto& p : space.params()) {
    if (fixed.count(p.name)) {
      d->Error("search_space." + p.name, "also fixed under trainer; set it in one place");
    }
  }
}

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
      if (!std::isfinite(bound) ||
          (p.type == ParamType::kInt &&
           (bound != std::floor(bound) || !search::IntBoundInRange(bound)))) {
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

}  // namespace sift::common

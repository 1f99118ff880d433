#include "common/config/config_pbt.h"

#include <algorithm>

#include "search/factory.h"

namespace sift::common {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool IsTorchScriptModel(const StudyConfig& config) {
  const auto it = config.fixed.find("model");
  return it != config.fixed.end() && search::ToString(it->second) == "torchscript";
}

// "" when `name` may change at an exploit, else why not.
std::string MutableProblem(const StudyConfig& config, const std::string& name) {
  const search::ParamSpec* spec = config.space.Find(name);
  if (spec == nullptr) {
    return "'" + name + "' is not in search_space; only searched parameters change at an exploit";
  }
  for (const auto& p : config.space.params()) {
    if (p.condition && p.condition->parent == name) {
      return "'" + name + "' decides whether '" + p.name +
             "' exists (its condition), so it cannot change mid-training";
    }
  }
  if (config.trial.is_command()) return "";  // the program re-reads SIFT_PARAMS on resume
  const auto& knobs = PbtMutableKnobs();
  if (std::find(knobs.begin(), knobs.end(), name) == knobs.end()) {
    return "'" + name +
           "' cannot change mid-training (a copied checkpoint fixes it); the ones "
           "that can: " +
           Join(knobs);
  }
  if (name == "dropout" && IsTorchScriptModel(config)) {
    return "'dropout' is the TorchScript module's own; the trainer cannot change it mid-training";
  }
  return "";
}

}  // namespace

const std::vector<std::string>& PbtMutableKnobs() {
  static const std::vector<std::string> knobs = {"lr", "weight_decay", "momentum", "dropout",
                                                 "accumulation_steps"};
  return knobs;
}

void CheckPbt(bool max_trials_set, yamlcfg::Diagnostics* d, StudyConfig* config) {
  search::Options& options = config->scheduler.options;
  const search::PbtOptions pbt = search::ReadPbtOptions(options);
  if (pbt.interval_epochs >= config->budget.max_epochs) {
    d->Error("scheduler.interval_epochs", "must be below budget.max_epochs (" +
                                              std::to_string(config->budget.max_epochs) +
                                              "), or no member is ever exploited");
  }
  if (!max_trials_set) {
    config->budget.max_trials = pbt.population;
  } else if (config->budget.max_trials != pbt.population) {
    d->Error("budget.max_trials", "must equal scheduler.population (" +
                                      std::to_string(pbt.population) +
                                      ") for pbt: the population is the study's trials");
  }
  if (!pbt.mutable_params.empty()) {
    const bool scalar = options.count("mutable") > 0;
    for (size_t i = 0; i < pbt.mutable_params.size(); ++i) {
      const std::string problem = MutableProblem(*config, pbt.mutable_params[i]);
      if (!problem.empty()) {
        d->Error(scalar ? "scheduler.mutable" : "scheduler.mutable." + std::to_string(i), problem);
      }
    }
    return;
  }
  if (config->trial.is_command()) {
    d->Error("scheduler.mutable",
             "required for a command trial: list the parameters your "
             "program re-reads from SIFT_PARAMS when it resumes");
    return;
  }
  // The default: every searched parameter that can change mid-training, in the space's order.
  int64_t n = 0;
  for (const auto& p : config->space.params()) {
    if (MutableProblem(*config, p.name).empty()) {
      options["mutable." + std::to_string(n++)] = p.name;
    }
  }
  if (n == 0) {
    d->Error("scheduler.type", "pbt needs a searched parameter it can change mid-training (" +
                                   Join(PbtMutableKnobs()) + ") in search_space");
  }
}

}  // namespace sift::common

// Population-based training's checks against the rest of a study config: which parameters may
// change at an exploit, and the budget a population implies.
#pragma once

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// The built-in trainer's settings that can change between two epochs of one run (optimizer
// param groups, dropout, accumulation); every other one shapes the model, the optimizer's state
// or the data order, which a copied checkpoint fixes.
const std::vector<std::string>& PbtMutableKnobs();

// For `scheduler: {type: pbt}`, once the space, the trial and the budget are read: refuses a
// mutable parameter that cannot change mid-training (naming its key and line), lists the
// default mutable parameters in config->scheduler.options when none are given, and sets
// budget.max_trials to the population unless the config set it (`max_trials_set`).
void CheckPbt(bool max_trials_set, yamlcfg::Diagnostics* d, StudyConfig* config);

}  // namespace sift::common

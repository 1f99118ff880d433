// The `trainer:` section of a study config: the fixed settings of the built-in trainer (or a
// command trial's fixed parameters), and the search space checked against what the trainer takes.
#pragma once

#include <set>
#include <string>

#include "common/config/config_yaml.h"
#include "search/space.h"

namespace sift::common {

// Fixed trainer settings. Every bad one is reported: the trainer names the first problem, so
// each round drops the setting it named and asks again. Returns the settings that passed.
search::Params ParseTrainer(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, search::Params* all);

// A command trial's fixed parameters (under `trainer:`): any names, single values, passed to the
// program as they are.
search::Params ParseCommandParams(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d,
                                  search::Params* all);

// A command trial's searched names must not also be fixed.
void CheckSpaceAgainstFixed(const search::SearchSpace& space, const search::Params& fixed,
                            yamlcfg::Diagnostics* d);

// Every searched name must be a trainer hyperparameter that is not also fixed, and every value
// the space can produce (bounds, choices) must be one the trainer accepts. `broken`: parameters
// already reported, whose values are not checked; `base`: the fixed settings that passed.
void CheckSpaceAgainstTrainer(const search::SearchSpace& space, const std::set<std::string>& broken,
                              const search::Params& fixed, const search::Params& base,
                              yamlcfg::Diagnostics* d);

}  // namespace sift::common

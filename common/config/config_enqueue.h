// The config's `enqueue:` list: configurations tried first (Optuna's enqueue_trial), each a
// map of parameter values, partial or whole, checked against the search space.
#pragma once

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// Reads `enqueue:` into config->enqueue; call once the search space is read. Each problem is
// named with its entry and line: "enqueue[1].lr: 5 is outside [0.001, 0.1] (line 9)".
void ParseEnqueue(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, StudyConfig* config);

}  // namespace sift::common

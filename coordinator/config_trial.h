// The `trial:` section of a study config: a command trial's program, folder and time limits.
#pragma once

#include <string>

#include "coordinator/config.h"
#include "coordinator/config_yaml.h"

namespace sift::coordinator {

// Reads `trial:` into `out`. `origin` is the config file: the command runs in its folder
// unless trial.dir says otherwise.
void ParseTrial(yamlcfg::MapReader& top, const std::string& origin, yamlcfg::Diagnostics* d,
                TrialConfig* out);

// Whether `metric` is one the built-in trainer reports.
bool IsBuiltinMetric(const std::string& metric);

}  // namespace sift::coordinator

// The `trial:` section of a study config: a command trial's program, folder and time limits.
#pragma once

#include <string>

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// Reads `trial:` into `out`. `origin` is the config file: the command runs in its folder
// unless trial.dir says otherwise.
void ParseTrial(yamlcfg::MapReader& top, const std::string& origin, yamlcfg::Diagnostics* d,
                TrialConfig* out);

// "" when the command's program can be started here (an executable file: on PATH, or a path
// relative to trial.dir), else the problem naming it. Checked with the data, before any trial.
std::string CheckCommandProgram(const TrialConfig& trial);

}  // namespace sift::common

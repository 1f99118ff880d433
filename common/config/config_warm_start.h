// The config's `warm_start:` section: earlier studies whose results TPE and GP learn from.
#pragma once

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// Reads `warm_start: {studies: [ids], database: PATH, weight: W}` into config->warm_start.
// A relative database path is taken from `base_dir` (the config file's folder); the file must
// exist. Each problem names its field and line: "warm_start.studies[1]: must be a study id
// (an integer >= 1), got 'first' (line 4)".
void ParseWarmStart(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, const std::string& base_dir,
                    StudyConfig* config);

}  // namespace sift::common

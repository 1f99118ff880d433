// The `searcher:` and `scheduler:` sections of a study config: the algorithm's name and its
// options, flattened for the factories in search/ (which judge them).
#pragma once

#include <string>

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// searcher: {type: random, ...options} or just `searcher: random`; `section` is "searcher" or
// "scheduler".
void ParseAlgorithm(yamlcfg::MapReader& top, const std::string& section, yamlcfg::Diagnostics* d,
                    AlgorithmConfig* out);

}  // namespace sift::common

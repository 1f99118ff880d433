// The `search_space:` section of a study config: each parameter's type, bounds or choices, and
// the conditions that make one active only for some values of another.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/config/config_limits.h"
#include "common/config/config_yaml.h"
#include "search/space.h"

namespace sift::common {

// Parses search_space into `out`. `broken` collects the parameters found faulty, whose values are
// then not checked against the trainer.
void ParseSearchSpace(yamlcfg::MapReader& top, const ConfigLimits& limits, yamlcfg::Diagnostics* d,
                      search::SearchSpace* out, std::set<std::string>* broken);

// A list of scalars (or, when `allow_scalar`, one scalar) as typed values.
void ReadValues(const YAML::Node& node, const std::string& path, bool allow_scalar,
                yamlcfg::Diagnostics* d, std::vector<search::ParamValue>* out);

}  // namespace sift::common

// The `objectives:` and `constraints:` sections of a study config: two to four objectives
// searched for their Pareto set, and bounds a trial must respect, on metrics a trial reports or
// Sift measures (common/metric_names.h).
#pragma once

#include <string>
#include <vector>

#include "common/config/config_yaml.h"
#include "search/objectives.h"

namespace sift::common {

// Reads `objectives:` into `out` (2 to 4, distinct metrics, in order). Beside `objective:` it is
// an error. `any_metric`: a command trial, whose program may report metrics of its own. `task`
// (data.task, "" when unstated) rules out the other task's metrics.
void ParseObjectives(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, bool any_metric,
                     const std::string& task, std::vector<search::Objective>* out);

// Reads `constraints:` into `out`: each `{metric, max: X}` or `{metric, min: X}`.
void ParseConstraints(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, bool any_metric,
                      const std::string& task, std::vector<search::Constraint>* out);

}  // namespace sift::common

// The `objective:` section of a study config: the metric a study optimises, its direction, and
// the target the forecast reports the cost of reaching.
#pragma once

#include <optional>
#include <string>

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// Reads `objective:` into `out` and objective.target into `target`. `any_metric`: a command
// trial, whose program may report metrics of its own; the direction of one Sift does not know
// must be given.
void ParseObjective(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, search::Objective* out,
                    bool any_metric, std::optional<double>* target);

// Regression data scores by val_rmse (minimised) unless the objective says otherwise; a metric
// of the other task is an error when the task is stated. Called once data.task is read.
void CheckObjectiveForTask(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d,
                           const std::string& task, search::Objective* objective);

}  // namespace sift::common

// The `objective:` section of a study config: the metric a study optimises, its direction, and
// the target the forecast reports the cost of reaching. The pieces `objectives:` shares with it
// (a direction, a metric against the task) are here too.
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

// Reads `direction` from `r` for out->metric. A metric Sift knows (`known`) is a loss or a
// score, so its direction defaults to the right one and, when `judge`, the wrong one is an
// error; a program's own metric must say which.
void ReadDirection(yamlcfg::MapReader& r, yamlcfg::Diagnostics* d, bool known, bool judge,
                   search::Objective* out);

// Regression data scores by val_rmse (minimised) unless the objective says otherwise; a metric
// of the other task is an error when the task is stated. Called once data.task is read.
void CheckObjectiveForTask(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d,
                           const std::string& task, search::Objective* objective);

// A metric of the other task (val_accuracy in a regression study) is an error at `path`.
void CheckMetricForTask(yamlcfg::Diagnostics* d, const std::string& path, const std::string& metric,
                        const std::string& task);

}  // namespace sift::common

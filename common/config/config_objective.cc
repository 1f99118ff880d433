#include "common/config/config_objective.h"

#include <iterator>

#include "common/metric_names.h"

namespace sift::common {

using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

void ReadDirection(MapReader& r, Diagnostics* d, bool known, bool judge, search::Objective* out) {
  const std::string path = r.PathOf("direction");
  std::string direction;
  if (!known) {
    if (r.Enum("direction", {"maximize", "minimize"}, &direction)) {
      out->maximize = direction == "maximize";
    } else if (!r.Has("direction")) {
      d->Error(path, "missing; say maximize or minimize for the program's own metric '" +
                         out->metric + "'");
    }
    return;
  }
  // A loss or an error is minimised unless said otherwise; maximising one is always a mistake.
  const bool is_loss = !common::HigherIsBetter(out->metric);
  out->maximize = !is_loss;
  if (r.Enum("direction", {"maximize", "minimize"}, &direction)) {
    out->maximize = direction == "maximize";
    if (judge && out->maximize == is_loss) {
      d->Error(path, "must be " + std::string(is_loss ? "minimize" : "maximize") + " for " +
                         out->metric + ", got '" + direction + "'");
    }
  }
}

void ParseObjective(MapReader& top, Diagnostics* d, search::Objective* out, bool any_metric,
                    std::optional<double>* target) {
  MapReader r(top.Get("objective"), "objective", d);
  // The value the forecast reports the dollars and time to reach (and `sift report --target`).
  if (double t = 0; r.Double("target", &t)) *target = t;
  const bool metric_given = r.Has("metric");
  bool metric_ok = false;
  if (any_metric && metric_given) {
    metric_ok = r.String("metric", &out->metric);
    if (metric_ok && out->metric.empty()) d->Error("objective.metric", "must not be empty");
    if (metric_ok && !out->metric.empty() && !common::IsBuiltinObjective(out->metric)) {
      ReadDirection(r, d, /*known=*/false, /*judge=*/true, out);
      r.RejectUnknown();
      return;
    }
  } else {
    metric_ok = r.Enum("metric",
                       {std::begin(common::kObjectiveMetrics), std::end(common::kObjectiveMetrics)},
                       &out->metric);
  }
  ReadDirection(r, d, /*known=*/true, /*judge=*/metric_ok || !metric_given, out);
  r.RejectUnknown();
}

void CheckMetricForTask(Diagnostics* d, const std::string& path, const std::string& metric,
                        const std::string& task) {
  if (task == "regression" && common::IsClassificationMetric(metric)) {
    d->Error(path, metric +
                       " is for classification; data.task is regression (use val_rmse, "
                       "val_mae or val_r2)");
  } else if (task == "classification" && common::IsRegressionMetric(metric)) {
    d->Error(path, metric +
                       " is for regression; data.task is classification (use "
                       "val_accuracy, val_balanced_accuracy, val_macro_f1, val_roc_auc or "
                       "val_loss)");
  }
}

void CheckObjectiveForTask(MapReader& top, Diagnostics* d, const std::string& task,
                           search::Objective* objective) {
  const YAML::Node node = top.Get("objective");
  const bool metric_given = node.IsMap() && node["metric"].IsDefined();
  if (task == "regression" && !metric_given) {
    objective->metric = "val_rmse";
    objective->maximize = false;
  }
  CheckMetricForTask(d, "objective.metric", objective->metric, task);
}

}  // namespace sift::common

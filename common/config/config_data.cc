#include "common/config/config_data.h"

#include <string>
#include <utility>
#include <vector>

#include "common/config/config.h"
#include "common/config/config_model_files.h"
#include "common/config/config_space.h"
#include "common/config/config_trial.h"
#include "common/data/validate.h"
#include "common/hparams/hparams.h"
#include "common/metric_names.h"

namespace sift::common {

using search::ParamValue;
using yamlcfg::AtLeast;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

namespace {

// A data file: a path, or for npy {x: features.npy, y: labels.npy}, or for idx
// {images: ...-idx3-ubyte.gz, labels: ...-idx1-ubyte.gz}.
void ParseFileRef(MapReader& r, const std::string& key, Diagnostics* d, data::FileRef* out) {
  const YAML::Node node = r.Get(key);
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string path = r.PathOf(key);
  if (node.IsScalar()) {
    out->path = node.Scalar();
  } else if (node.IsMap() && (node["images"] || node["labels"])) {
    MapReader files(node, path, d);
    if (!files.String("images", &out->path)) {
      d->Error(path + ".images", "missing; the images' IDX file");
    }
    if (!files.String("labels", &out->labels)) {
      d->Error(path + ".labels", "missing; the labels' IDX file");
    }
    files.RejectUnknown();
  } else if (node.IsMap()) {
    MapReader files(node, path, d);
    if (!files.String("x", &out->path)) d->Error(path + ".x", "missing; the features' .npy file");
    if (!files.String("y", &out->labels)) d->Error(path + ".y", "missing; the labels' .npy file");
    files.RejectUnknown();
  } else {
    d->Error(path,
             "must be a file path, {x: features.npy, y: labels.npy} or {images: ..., "
             "labels: ...} (idx), got " +
                 yamlcfg::Describe(node));
    return;
  }
  if (out->path.empty()) d->Error(path, "must not be empty");
}

}  // namespace

void ParseData(MapReader& top, Diagnostics* d, data::DataSpec* data) {
  const size_t errors_before = d->count();
  MapReader r(top.Get("data"), "data", d);
  r.Enum("format", {"idx", "csv", "npy", "npz"}, &data->format);
  if (r.String("dir", &data->dir) && data->dir.empty()) d->Error("data.dir", "must not be empty");
  if (r.Int("train_limit", &data->train_limit)) {
    AtLeast(d, "data.train_limit", data->train_limit, 0);
  }
  if (r.Int("val_size", &data->val_size)) AtLeast(d, "data.val_size", data->val_size, 1);
  if (r.Int("test_limit", &data->test_limit)) AtLeast(d, "data.test_limit", data->test_limit, 0);
  for (auto [key, ref] : {std::pair{"file", &data->file},
                          {"train", &data->train},
                          {"val", &data->val},
                          {"test", &data->test}}) {
    ParseFileRef(r, key, d, ref);
  }
  if (r.Has("split")) {
    MapReader split(r.Get("split"), "data.split", d);
    split.Double("val", &data->split.val);
    split.Double("test", &data->split.test);
    split.UInt64("seed", &data->split.seed);
    split.RejectUnknown();
    // `train:` alone with `split:` is the one-file form under another name: split it.
    const bool other_files = !data->val.empty() || !data->test.empty();
    if (data->file.empty() && !data->train.empty() && !other_files) {
      data->file = std::exchange(data->train, data::FileRef{});
    } else if (data->file.empty() && other_files) {
      d->Error("data.split",
               "splits one file (data.file); with separate train and val files "
               "there is nothing to split (drop data.split)");
    }
  }
  r.Enum("task", {"classification", "regression"}, &data->task);
  r.String("label", &data->label);
  if (const YAML::Node features = r.Get("features"); features.IsDefined() && !features.IsNull()) {
    std::vector<ParamValue> names;
    ReadValues(features, "data.features", /*allow_scalar=*/true, d, &names);
    for (const auto& n : names) data->features.push_back(search::ToString(n));
  }
  r.Enum("missing", {"error", "mean"}, &data->missing);
  if (r.Enum("standardize", {"true", "false", "features", "target", "both", "none"},
             &data->standardize)) {
    if (data->standardize == "true") data->standardize = "both";
    if (data->standardize == "false") data->standardize = "none";
  }
  if (r.Has("arrays")) {
    MapReader arrays(r.Get("arrays"), "data.arrays", d);
    arrays.String("x", &data->x_key);
    arrays.String("y", &data->y_key);
    arrays.RejectUnknown();
  }
  r.RejectUnknown();
  // What needs no file read: formats, file combinations, split fractions (`sift validate` and
  // the run then read the files too: ValidateData).
  if (errors_before == d->count()) {
    for (const auto& e : data::CheckDataSpec(*data)) d->ErrorUnder("", e);
  }
}

namespace {

// What is wrong with `metric` for the task the data implies, "" when nothing. `single`: it is
// objective.metric, which the fix names as such.
std::string MetricForData(const std::string& metric, bool single, const data::DataSummary& data) {
  const auto use = [single](const std::string& other) {
    return single ? "set objective: {metric: " + other + "}" : "use " + other;
  };
  if (data.task == "regression" && common::IsClassificationMetric(metric)) {
    return metric + ", but the label is a regression target (many distinct numbers); " +
           use("val_rmse") + ", or data.task: classification";
  }
  if (data.task == "classification" && common::IsRegressionMetric(metric) &&
      !data.text_class.empty()) {
    return metric + " is a regression metric, but the label's classes are text ('" +
           data.text_class + "'); " + use("val_accuracy") + " (or another classification metric)";
  }
  if (data.task == "classification" && common::IsRegressionMetric(metric)) {
    return metric +
           " is for regression, but the label looks like a class (few distinct "
           "integers); " +
           use("val_accuracy") +
           ", or data.task: regression if the "
           "integers are amounts";
  }
  if (metric == common::kValRocAuc && data.classes != 2) {
    return "val_roc_auc is for two classes, the label has " + std::to_string(data.classes) +
           "; use val_macro_f1 or val_balanced_accuracy";
  }
  return "";
}

}  // namespace

std::vector<std::string> ValidateStudyData(const StudyConfig& config, std::string* summary) {
  if (config.trial.is_command()) {  // the program reads its own data; it must be there to run
    if (summary != nullptr) *summary = "read by the program (trial.command)";
    const std::string problem = CheckCommandProgram(config.trial);
    if (problem.empty()) return {};
    return {problem};
  }
  // A missing data set is one line naming the folder, not one per file it should hold.
  if (config.data.uses_dir()) {
    if (std::string p = data::CheckSourceFilesPresent(config.data); !p.empty()) return {p};
  }
  data::DataSummary data;
  std::vector<std::string> errors = data::ValidateData(config.data, &data);
  for (auto& e : MissingModelFiles(config.fixed, config.space)) errors.push_back(std::move(e));
  if (!errors.empty()) return errors;
  if (summary != nullptr) *summary = data.text;
  // Every metric the study scores or bounds, against the task the data implies.
  std::vector<std::pair<std::string, std::string>> metrics;  // path, metric
  if (config.objectives.size() > 1) {
    for (size_t i = 0; i < config.objectives.size(); ++i) {
      metrics.emplace_back("objectives[" + std::to_string(i) + "].metric",
                           config.objectives[i].metric);
    }
  } else {
    metrics.emplace_back("objective.metric", config.objective.metric);
  }
  for (size_t i = 0; i < config.constraints.size(); ++i) {
    metrics.emplace_back("constraints[" + std::to_string(i) + "].metric",
                         config.constraints[i].metric);
  }
  for (const auto& [path, metric] : metrics) {
    if (std::string p = MetricForData(metric, path == "objective.metric", data); !p.empty()) {
      errors.push_back(path + ": " + p);
    }
  }
  common::HParams hp;
  if (data.task == "classification" && common::ParseHParams(config.fixed, &hp).empty() &&
      hp.loss != "mse") {
    errors.push_back("trainer.loss: " + hp.loss +
                     " is for regression; a classification study "
                     "trains on cross-entropy (drop trainer.loss, or set data.task: regression)");
  }
  return errors;
}

}  // namespace sift::common

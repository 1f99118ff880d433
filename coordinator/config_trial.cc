#include "coordinator/config_trial.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace sift::coordinator {

namespace fs = std::filesystem;

namespace {

// The folder relative paths start from: the config file's, when `origin` names one. A stored
// config parsed again (a restarted coordinator: origin "study 3" or the run's sift.db) has none.
fs::path BaseFolder(const std::string& origin) {
  std::error_code ec;
  const std::string ext = fs::path(origin).extension().string();
  const bool config_file = ext == ".yaml" || ext == ".yml" || ext == ".json";
  if (config_file && fs::is_regular_file(origin, ec)) {
    return fs::absolute(fs::path(origin), ec).parent_path();
  }
  return fs::current_path(ec);
}

}  // namespace

bool IsBuiltinMetric(const std::string& metric) {
  static const char* const kMetrics[] = {"val_accuracy", "val_loss", "train_loss",
                                         "val_rmse",     "val_mae",  "val_r2"};
  return std::find(std::begin(kMetrics), std::end(kMetrics), metric) != std::end(kMetrics);
}

void ParseTrial(yamlcfg::MapReader& top, const std::string& origin, yamlcfg::Diagnostics* d,
                TrialConfig* out) {
  if (!top.Has("trial")) return;
  yamlcfg::MapReader r(top.Get("trial"), "trial", d);
  const YAML::Node command = r.Get("command");
  if (!command.IsDefined() || command.IsNull()) {
    d->Error("trial.command", "missing; the program and its arguments, e.g. "
                              "[python3, train.py, --data, data/]");
  } else if (!command.IsSequence() || command.size() == 0) {
    d->Error("trial.command", "must be a non-empty list (program, then arguments), got " +
                                  yamlcfg::Describe(command));
  } else {
    for (size_t i = 0; i < command.size(); ++i) {
      const std::string path = "trial.command[" + std::to_string(i) + "]";
      if (!command[i].IsScalar()) {
        d->Error(path, "must be a single string, got " + yamlcfg::Describe(command[i]));
      } else if (command[i].Scalar().empty()) {
        d->Error(path, i == 0 ? "the program must not be empty" : "must not be empty");
      } else {
        out->command.push_back(command[i].Scalar());
      }
    }
  }
  const fs::path base = BaseFolder(origin);
  std::string dir;
  fs::path folder = base;
  if (r.String("dir", &dir)) {
    if (dir.empty()) d->Error("trial.dir", "must not be empty (leave it out for the config's folder)");
    folder = fs::path(dir).is_absolute() ? fs::path(dir) : base / dir;
  }
  out->dir = folder.lexically_normal().string();
  if (r.Double("report_timeout", &out->report_timeout) &&
      !(out->report_timeout > 0 && std::isfinite(out->report_timeout))) {
    d->Error("trial.report_timeout", "must be a number of seconds > 0");
  }
  if (r.Double("grace_seconds", &out->grace_seconds) &&
      !(out->grace_seconds >= 0 && std::isfinite(out->grace_seconds))) {
    d->Error("trial.grace_seconds", "must be a number of seconds >= 0");
  }
  r.RejectUnknown();
}

}  // namespace sift::coordinator

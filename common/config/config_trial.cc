#include "common/config/config_trial.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace sift::common {

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

std::string CheckCommandProgram(const TrialConfig& trial) {
  if (trial.command.empty()) return "";
  const std::string& program = trial.command[0];
  std::error_code ec;
  if (!fs::is_directory(trial.dir, ec)) {
    return "trial.dir: " + trial.dir + " is not a folder (the command runs there)";
  }
  auto runnable = [](const fs::path& p) {
    std::error_code e;
    return fs::is_regular_file(p, e) && access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    const fs::path p =
        (fs::path(program).is_absolute() ? fs::path(program) : trial.dir / fs::path(program))
            .lexically_normal();
    if (runnable(p)) return "";
    return "trial.command[0]: " + p.string() +
           (fs::exists(p, ec) ? " is not an executable file" : " does not exist");
  }
  const char* path = getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    if (runnable(fs::path(dir.empty() ? "." : dir) / program)) return "";
    start = end + 1;
  }
  return "trial.command[0]: '" + program + "' is not found on PATH";
}

void ParseTrial(yamlcfg::MapReader& top, const std::string& origin, yamlcfg::Diagnostics* d,
                TrialConfig* out) {
  if (!top.Has("trial")) return;
  yamlcfg::MapReader r(top.Get("trial"), "trial", d);
  const YAML::Node command = r.Get("command");
  if (!command.IsDefined() || command.IsNull()) {
    d->Error("trial.command",
             "missing; the program and its arguments, e.g. "
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
    if (dir.empty())
      d->Error("trial.dir", "must not be empty (leave it out for the config's folder)");
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

}  // namespace sift::common

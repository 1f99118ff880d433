// ParseStudyConfig and LoadStudyConfig, and the small sections (name, budget, worker,
// checkpoint); README.md says which file reads each other section.
#include "common/config/config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "common/config/config_algorithm.h"
#include "common/config/config_cost.h"
#include "common/config/config_data.h"
#include "common/config/config_enqueue.h"
#include "common/config/config_model_files.h"
#include "common/config/config_objective.h"
#include "common/config/config_objectives.h"
#include "common/config/config_pbt.h"
#include "common/config/config_space.h"
#include "common/config/config_startup.h"
#include "common/config/config_trainer.h"
#include "common/config/config_trial.h"
#include "common/config/config_warm_start.h"
#include "common/config/config_yaml.h"
#include "search/factory.h"
#include "search/space.h"

namespace sift::common {
namespace {

using search::Params;
using yamlcfg::AtLeast;
using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

bool ValidStudyName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

void ParseName(MapReader& top, Diagnostics* d, std::string* out) {
  if (!top.Has("name")) {
    top.Get("name");
    d->Error("name", "missing; give the study a name matching [A-Za-z0-9_.-]{1,64}");
    return;
  }
  std::string name;
  if (!top.String("name", &name)) return;
  if (!ValidStudyName(name)) {
    d->Error("name", "must match [A-Za-z0-9_.-]{1,64}, got '" + name + "'");
    return;
  }
  *out = name;
}

void ParseBudget(MapReader& top, Diagnostics* d, BudgetConfig* b) {
  MapReader r(top.Get("budget"), "budget", d);
  if (r.Int("max_trials", &b->max_trials)) AtLeast(d, "budget.max_trials", b->max_trials, 1);
  if (r.Int("max_epochs", &b->max_epochs)) AtLeast(d, "budget.max_epochs", b->max_epochs, 1);
  if (r.Double("max_dollars", &b->max_dollars)) {
    AtLeast(d, "budget.max_dollars", b->max_dollars, 0.0);
  }
  if (r.Double("max_hours", &b->max_hours)) AtLeast(d, "budget.max_hours", b->max_hours, 0.0);
  r.RejectUnknown();
}

void ParseWorker(MapReader& top, Diagnostics* d, WorkerConfig* w) {
  MapReader r(top.Get("worker"), "worker", d);
  if (r.String("instance_type", &w->instance_type) && w->instance_type.empty()) {
    d->Error("worker.instance_type", "must not be empty");
  }
  r.Enum("market", {"on-demand", "spot"}, &w->market);
  if (r.Double("price_per_hour", &w->price_per_hour)) {
    AtLeast(d, "worker.price_per_hour", w->price_per_hour, 0.0);
  }
  if (r.Int("threads", &w->threads)) AtLeast(d, "worker.threads", w->threads, 0);
  r.RejectUnknown();
}

void ParseCheckpoint(MapReader& top, Diagnostics* d, CheckpointConfig* c) {
  MapReader r(top.Get("checkpoint"), "checkpoint", d);
  if (r.Int("every_epochs", &c->every_epochs)) {
    AtLeast(d, "checkpoint.every_epochs", c->every_epochs, 1);
  }
  r.Enum("keep", {"all", "latest", "best"}, &c->keep);
  r.RejectUnknown();
}

std::string SyntaxError(const std::string& origin, const YAML::Mark& mark,
                        const std::string& message) {
  std::string out = origin.empty() ? "config" : origin;
  if (mark.line >= 0) {
    out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return out + ": " + message;
}

}  // namespace

std::string OverLimit(size_t found, const std::string& what, size_t limit, const char* name) {
  return std::to_string(found) + " " + what + ", over the limit of " + std::to_string(limit) +
         " (" + name + ")";
}

std::string ConfigDir(const std::string& config_path) {
  if (config_path.empty()) return "";
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(config_path, ec);
  return ec ? "" : absolute.parent_path().lexically_normal().string();
}

std::vector<std::string> ParseStudyConfig(const std::string& text, const std::string& origin,
                                          StudyConfig* out, const ConfigLimits& limits,
                                          const std::string& base_dir) {
  const std::string where = origin.empty() ? "config" : origin;
  if (text.size() > limits.max_bytes) {
    return {where + ": " + OverLimit(text.size(), "bytes", limits.max_bytes, "max_bytes")};
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard, far past max_depth, says only "bad file".
    return {where + ":" + std::to_string(e.mark.line + 1) +
            ": maps and lists nested too deep for the YAML parser, over the limit of " +
            std::to_string(limits.max_depth) + " levels (max_depth)"};
  } catch (const YAML::Exception& e) {
    return {SyntaxError(origin, e.mark, e.msg)};
  }
  int line = 0;
  if (const std::string e = yamlcfg::CheckShape(root, limits, &line); !e.empty()) {
    return {where + ":" + std::to_string(line) + ": " + e};
  }
  Diagnostics d;
  StudyConfig cfg;
  MapReader top(root, "", &d);
  if (!top.ok()) return d.Format(limits.max_errors);

  ParseName(top, &d, &cfg.name);
  ParseTrial(top, origin, &d, &cfg.trial);
  // A command trial's parameters and metrics are its program's: any names, no trainer checks.
  const bool command = top.Has("trial");
  // Several objectives are read once data.task is known; one is read here.
  const bool several = top.Has("objectives");
  if (!several) ParseObjective(top, &d, &cfg.objective, command, &cfg.target);
  const Params valid_fixed =
      command ? ParseCommandParams(top, &d, &cfg.fixed) : ParseTrainer(top, &d, &cfg.fixed);
  // A model file, like a data file, is named relative to the config's folder.
  for (const char* key : {"path", "init_from"}) {
    auto it = cfg.fixed.find(key);
    if (command || base_dir.empty() || it == cfg.fixed.end()) continue;
    if (auto* p = std::get_if<std::string>(&it->second);
        p && !p->empty() && !std::filesystem::path(*p).is_absolute()) {
      *p = (std::filesystem::path(base_dir) / *p).lexically_normal().string();
    }
  }
  std::set<std::string> broken;
  const size_t errors_before_space = d.count();
  ParseSearchSpace(top, limits, &d, &cfg.space, &broken);
  if (command) {
    CheckSpaceAgainstFixed(cfg.space, cfg.fixed, &d);
  } else {
    if (cfg.space.size() > 0) {
      CheckSpaceAgainstTrainer(cfg.space, broken, cfg.fixed, valid_fixed, &d);
    }
    for (const auto& e : CheckModelPath(cfg.fixed, cfg.space)) d.ErrorUnder("trainer", e);
  }
  // Any error under search_space, the trainer check's included, makes the space unusable.
  const bool space_ok = d.count() == errors_before_space;
  ParseAlgorithm(top, "searcher", &d, &cfg.searcher);
  ParseAlgorithm(top, "scheduler", &d, &cfg.scheduler);
  ParseBudget(top, &d, &cfg.budget);
  if (top.Int("parallelism", &cfg.parallelism)) AtLeast(&d, "parallelism", cfg.parallelism, 0);
  top.UInt64("seed", &cfg.seed);
  if (command && top.Has("data")) {
    d.Error("data", "a command trial reads its own data; pass its paths in trial.command");
    top.Get("data");
  } else if (!command) {
    ParseData(top, &d, &cfg.data);
    data::ResolveRelativePaths(&cfg.data, base_dir);
    if (!several) CheckObjectiveForTask(top, &d, cfg.data.task, &cfg.objective);
  }
  if (several) ParseObjectives(top, &d, command, cfg.data.task, &cfg.objectives);
  if (cfg.objectives.empty()) cfg.objectives = {cfg.objective};
  cfg.objective = cfg.objectives[0];  // one model: a single objective is a list of one
  ParseConstraints(top, &d, command, cfg.data.task, &cfg.constraints);
  ParseWorker(top, &d, &cfg.worker);
  ParseCheckpoint(top, &d, &cfg.checkpoint);
  if (space_ok) {
    ParseEnqueue(top, &d, &cfg);
  } else {
    top.Get("enqueue");  // judged once the space is
  }
  ParseWarmStart(top, &d, base_dir, &cfg);
  ParseTags(top, &d, &cfg.tags);
  ParseAlerts(top, &d, &cfg.alerts);
  top.RejectUnknown();

  // The factories are the judges of algorithm options, so `sift validate` and a running study
  // agree, and new searchers and schedulers need nothing here.
  std::vector<std::string> errors;
  FitRandomStartToBudget(&cfg);
  if (space_ok) {
    auto searcher = search::MakeSearcher(cfg.searcher.type, cfg.searcher.options, cfg.space,
                                         &errors, cfg.objectives.size());
    for (const auto& e : errors) d.ErrorUnder("searcher", e);
    if (cfg.warm_start.enabled() && cfg.objectives.size() > 1) {
      d.Error("warm_start", "earlier studies' results rank by one objective; a study with " +
                                std::to_string(cfg.objectives.size()) +
                                " objectives cannot use them");
    } else if (searcher && cfg.warm_start.enabled() && !searcher->SetPriors({})) {
      d.Error("warm_start", "searcher " + cfg.searcher.type +
                                " does not learn from earlier results; use tpe or gp");
    }
  }
  errors.clear();
  const search::SchedulerContext context{cfg.budget.max_epochs, cfg.objective.maximize,
                                         cfg.objectives.size()};
  search::MakeScheduler(cfg.scheduler.type, cfg.scheduler.options, context, &errors);
  for (const auto& e : errors) d.ErrorUnder("scheduler", e);
  if (cfg.scheduler.type == "pbt") {
    const YAML::Node budget = static_cast<const YAML::Node&>(root)["budget"];
    if (space_ok) CheckPbt(budget.IsMap() && budget["max_trials"].IsDefined(), &d, &cfg);
  }
  *out = std::move(cfg);
  return d.Format(limits.max_errors);
}

std::vector<std::string> LoadStudyConfig(const std::string& path, StudyConfig* out,
                                         std::string* text, const ConfigLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return {path + ": cannot read (is a directory)"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {path + ": cannot read (" + std::strerror(errno) + ")"};
  // Reading stops one chunk past the limit (a /dev/zero never ends).
  std::string contents;
  char chunk[1 << 16];
  while (contents.size() <= limits.max_bytes && in.read(chunk, sizeof(chunk)).gcount() > 0) {
    contents.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return {path + ": cannot read (" + std::strerror(errno) + ")"};
  if (contents.size() > limits.max_bytes) {
    return {path + ": over the limit of " + std::to_string(limits.max_bytes) +
            " bytes (max_bytes)"};
  }
  std::vector<std::string> errors = ParseStudyConfig(contents, path, out, limits, ConfigDir(path));
  // A config without `name:` is named after its file (houses.yaml: houses), as the config a
  // user writes first often is. The name is appended to the text, so the text the study stores
  // (and a coordinator restores) names it too; a text that cannot take an appended key (a flow
  // map, JSON) keeps its "name: missing".
  if (!errors.empty() && errors[0].rfind("name: missing", 0) == 0) {
    std::string named = contents;
    if (!named.empty() && named.back() != '\n') named += '\n';
    named += "name: " + DefaultStudyName(path) + "\n";
    StudyConfig retry;
    auto retry_errors = ParseStudyConfig(named, path, &retry, limits, ConfigDir(path));
    if (retry_errors.size() + 1 == errors.size()) {
      errors = std::move(retry_errors);
      contents = std::move(named);
      *out = std::move(retry);
    }
  }
  if (text != nullptr) *text = std::move(contents);
  return errors;
}

std::string DefaultStudyName(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (!ok) c = '-';
  }
  if (name.size() > 64) name.resize(64);
  return name.empty() ? "study" : name;
}

}  // namespace sift::common

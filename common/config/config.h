// A study config (YAML or JSON) parsed into typed settings, with validation that names the field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config_limits.h"
#include "common/data/data_spec.h"
#include "search/objectives.h"
#include "search/options.h"
#include "search/param_value.h"
#include "search/priors.h"
#include "search/space.h"
#include "search/study_view.h"

namespace sift::common {

struct AlgorithmConfig {
  std::string type;
  search::Options options;  // every other key of the section, nested maps flattened with dots
};

struct BudgetConfig {
  int64_t max_trials = 16;   // trials created at most
  int64_t max_epochs = 10;   // epochs per trial at most (the scheduler's max resource)
  double max_dollars = 0.0;  // 0: no dollar limit
  double max_hours = 0.0;    // wall-clock hours of the study; 0: no limit
};

struct WorkerConfig {
  std::string instance_type = "local-cpu";  // a key of the price catalog
  std::string market = "on-demand";         // on-demand | spot
  double price_per_hour = 0.0;              // > 0 overrides the catalog
  int64_t threads = 0;                      // per worker; 0: chosen by `sift run`
};

struct CheckpointConfig {
  // A checkpoint after every this many epochs (and on a spot notice, mid-epoch). A lost VM
  // retrains at most this many epochs; fewer checkpoints save disk and upload time.
  int64_t every_epochs = 1;
  // Which to keep on disk: all | latest (each trial's newest) | best (of finished trials, only
  // the best one's). Running and paused trials always keep their resume point.
  std::string keep = "latest";
};

// trial: a user's program instead of the built-in trainer (docs/workloads.md, section 3).
struct TrialConfig {
  std::vector<std::string> command;  // program and arguments; empty: the built-in trainer
  // Where it runs (absolute): trial.dir, relative to the config file's folder, which is the
  // default. A config given as text only (no file) uses the current directory.
  std::string dir;
  double report_timeout = 600;  // seconds without a report before the program is killed
  double grace_seconds = 10;    // between SIGTERM and SIGKILL
  bool is_command() const { return !command.empty(); }
};

// tags: cost allocation labels (team: vision, project: ranking); `sift report --by tag` rolls
// studies up by them and a coordinator's --quota limits the dollars of all studies with one.
using Tags = std::map<std::string, std::string>;

// alerts: warnings before the budget is gone (docs/config.md). Each fires once per study.
struct AlertConfig {
  std::vector<double> thresholds{50, 80, 100};  // percent of budget.max_dollars, ascending
  bool forecast = true;  // once, when the forecast says the dollar budget runs out first
  // Run with the alert as JSON on stdin (a webhook, a chat message); empty: none. A command
  // given as one string runs under /bin/sh -c.
  std::vector<std::string> command;
  double timeout_seconds = 10;  // then it is killed (and logged)
};

// warm_start: earlier studies whose completed trials TPE and GP learn from (docs/config.md).
struct WarmStartConfig {
  std::vector<int64_t> studies;  // their ids; empty: no warm start
  // Where they are: a SQLite file (absolute once parsed) or a postgresql:// URL; "": the
  // database of the coordinator that runs this study.
  std::string database;
  double weight = search::kDefaultPriorWeight;  // one earlier trial against one of this study's
  bool enabled() const { return !studies.empty(); }
};

struct StudyConfig {
  std::string name;
  search::Objective objective;  // objective: {metric, direction: maximize|minimize}
  // objectives: 2 to 4 of them, searched for their Pareto set; always filled, so that
  // objectives[0] == objective (a single objective is the list of one).
  std::vector<search::Objective> objectives;
  // constraints: {metric, max: X} or {metric, min: X}; a trial that breaks one is infeasible.
  std::vector<search::Constraint> constraints;
  search::SearchSpace space;  // search_space: name -> {type, low, high, scale, choices, condition}
  search::Params fixed;       // trainer: settings every trial uses (model, precision, ...)
  AlgorithmConfig searcher{"random", {}};
  AlgorithmConfig scheduler{"fifo", {}};
  BudgetConfig budget;
  int64_t parallelism = 0;  // trials running at once at most; 0: as many as there are workers
  uint64_t seed = 0;
  // The IDX folder form (dir, train_limit, val_size, test_limit) or csv/npy/npz files: the one
  // data spec the coordinator validates and the worker loads (common/data/data_spec.h).
  data::DataSpec data;
  WorkerConfig worker;
  CheckpointConfig checkpoint;
  TrialConfig trial;
  Tags tags;
  AlertConfig alerts;
  std::optional<double> target;  // objective.target: the value the forecast says when it reaches
  // What a valid config does that its writer may not expect (a default fitted to the budget, a
  // searcher whose random start is the whole study): `sift validate` and `sift run` print them.
  std::vector<std::string> notes;
  // enqueue: configurations tried first, in order (partial ones completed by a seeded draw).
  std::vector<search::Params> enqueue;
  WarmStartConfig warm_start;
};

// Parses and validates `text` (YAML, or JSON, which YAML reads too). `origin` (a path) prefixes
// syntax errors. Returns every problem as "field.path: what is wrong" (e.g.
// "search_space.lr.low: must be > 0 for a log scale"); empty means `out` is valid and complete:
// the search space, searcher and scheduler options, and the trainer parameters are all checked.
// Time and memory are bounded by `limits`: an input over one is an error naming it.
// `base_dir`: the config file's folder; relative data paths (data.dir and every data file) are
// taken from there, not from the current directory ("" leaves them as written).
std::vector<std::string> ParseStudyConfig(const std::string& text, const std::string& origin,
                                          StudyConfig* out, const ConfigLimits& limits = {},
                                          const std::string& base_dir = "");

// The folder of a config file, absolute ("" for ""): the base_dir of ParseStudyConfig.
std::string ConfigDir(const std::string& config_path);

// Reads the study's data files (data::ValidateData) and checks the objective against the task
// the data states or implies, so bad data fails before any trial. `summary` gets one line.
std::vector<std::string> ValidateStudyData(const StudyConfig& config,
                                           std::string* summary = nullptr);

// Reads the file and calls ParseStudyConfig (data paths relative to the file's folder); a
// missing file is one error naming the path. A file over limits.max_bytes is not read past the
// limit. A config without `name:` gets DefaultStudyName(path), appended to *text.
std::vector<std::string> LoadStudyConfig(const std::string& path, StudyConfig* out,
                                         std::string* text = nullptr,
                                         const ConfigLimits& limits = {});

// The config file's name without its folder and extension, as a study name: characters outside
// [A-Za-z0-9_.-] become '-', at most 64 ("study" for none).
std::string DefaultStudyName(const std::string& path);

}  // namespace sift::common

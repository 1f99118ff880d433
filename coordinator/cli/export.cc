#include "coordinator/cli/export.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "common/checkpoint_names.h"
#include "common/subprocess.h"
#include "coordinator/report/export_pick.h"
#include "coordinator/report/study_reports.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

namespace fs = std::filesystem;

struct ExportOptions {
  std::string run_dir, checkpoints, out, worker_binary, db, pick;
  int64_t study = 0, trial = -1;
  bool pareto = false;
};

ExportOptions& ExportOpts() {
  static ExportOptions options;
  return options;
}

std::string SiblingWorker() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : exe.parent_path()).string() + "/sift-worker";
}

// Runs argv, its output going to ours; returns its exit code (127 when it cannot start).
int RunProgram(const std::vector<std::string>& argv) {
  common::SpawnOptions o;
  o.argv = argv;
  std::string error;
  const pid_t pid = common::Spawn(o, &error);
  if (pid < 0) {
    std::cerr << "sift export: " << error << "\n";
    return 127;
  }
  int status = 0;
  common::Wait(pid, &status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// --pareto prints the Pareto set (returns 0); --pick sets *study and *number to the trial its
// rule picks (returns -1 to go on and export it). Otherwise the exit code of the failure.
int Choose(const ExportOptions& o, int64_t* study, int64_t* number) {
  const std::string db = !o.db.empty() ? o.db : !o.run_dir.empty() ? o.run_dir + "/sift.db" : "";
  if (db.empty()) {
    std::cerr << "sift export: --pareto and --pick read the study's database: give --run DIR "
                 "or --db\n";
    return 2;
  }
  PickRule rule;
  if (std::string problem = ParsePick(o.pick, &rule); !o.pareto && !problem.empty()) {
    std::cerr << "sift export " << problem << "\n";
    return 2;
  }
  std::vector<StudyReport> reports;
  try {
    reports = LoadStudyReports(db, o.study);
  } catch (const std::exception& e) {
    const std::string what = e.what(), name = RedactDbUrl(db);
    std::cerr << "sift export: " << (what.find(name) == std::string::npos ? name + ": " : "")
              << what << "\n";
    return 1;
  }
  if (o.pareto) {
    for (const auto& r : reports) std::cout << FormatParetoSet(r);
    return 0;
  }
  if (reports.size() != 1) {
    std::cerr << "sift export: " << reports.size() << " studies in " << RedactDbUrl(db)
              << "; choose one with --study\n";
    return 2;
  }
  std::string why;
  const auto picked = PickTrial(reports[0], rule, &why);
  if (!picked) {
    std::cerr << "sift export: --pick '" << o.pick << "': " << why << "\n";
    return 1;
  }
  const TrialSummary& t = reports[0].trials[static_cast<size_t>(*picked)];
  std::cerr << fmt::format("sift export: --pick chose trial {} ({} {:.6g}, ${:.6f}, {} epochs)\n",
                           *picked, reports[0].study.metric, *t.objective, t.dollars, t.epochs);
  *study = reports[0].study.record.id;
  *number = *picked;
  return -1;
}

}  // namespace

std::string FindTrialCheckpoint(const std::string& checkpoints, int64_t study, int64_t trial,
                                std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(checkpoints, ec)) {
    *error = "no checkpoint directory " + checkpoints;
    return "";
  }
  struct Found {
    std::string path;
    common::CheckpointPosition position;
  };
  std::vector<std::pair<std::string, Found>> best_per_study;  // study dir name -> latest
  for (const auto& dir : fs::directory_iterator(checkpoints, ec)) {
    const std::string name = dir.path().filename().string();
    if (!dir.is_directory() || name.rfind("study-", 0) != 0) continue;
    if (study > 0 && name != "study-" + std::to_string(study)) continue;
    std::optional<Found> latest;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      const auto p = common::ParseCheckpointName(f.path().filename().string());
      if (!p || p->trial != trial) continue;
      if (!latest || latest->position < *p) latest = Found{f.path().string(), *p};
    }
    if (latest) best_per_study.emplace_back(name, *latest);
  }
  if (best_per_study.empty()) {
    *error = "no checkpoint of trial " + std::to_string(trial) +
             (study > 0 ? " of study " + std::to_string(study) : std::string()) + " under " +
             checkpoints +
             " (a trial leaves one after its first epoch; retention may have "
             "removed those of trials that ended early)";
    return "";
  }
  if (best_per_study.size() > 1) {
    std::string names;
    for (const auto& [name, found] : best_per_study) names += " " + name;
    *error = "trial " + std::to_string(trial) + " has checkpoints in several studies (" +
             names.substr(1) + "); choose one with --study";
    return "";
  }
  return best_per_study.front().second.path;
}

void AddExportCommand(CLI::App& app) {
  ExportOptions& o = ExportOpts();
  auto* cmd = app.add_subcommand(
      "export",
      "write a trial's trained model as TorchScript (PyTorch's torch.jit.load); for a command "
      "trial, unpack the checkpoint folder its program saved");
  auto* run = cmd->add_option("--run", o.run_dir, "the run directory of a `sift run`");
  cmd->add_option(
         "--checkpoints", o.checkpoints,
         "a coordinator's checkpoint directory (its --checkpoints; default DIR/checkpoints "
         "with --run)")
      ->excludes(run);
  cmd->add_option("--study", o.study, "the study (default: the one with this trial)");
  auto* trial = cmd->add_option("--trial", o.trial, "the trial's number in its study");
  auto* pareto = cmd->add_flag(
      "--pareto", o.pareto, "list the study's cost/objective Pareto set (which trials to export)");
  auto* pick = cmd->add_option(
      "--pick", o.pick,
      "export the trial a rule picks: bounds and one goal, e.g. \"val_accuracy>=0.88, min "
      "dollars\" or \"dollars<=2, max val_accuracy\"");
  trial->excludes(pareto)->excludes(pick);
  pareto->excludes(pick);
  cmd->add_option("--db", o.db,
                  "the study database for --pareto and --pick (default DIR/sift.db with --run)");
  cmd->add_option("--out", o.out,
                  "the TorchScript file to write, with its sidecar (.json) beside it (a command "
                  "trial: a new or empty directory)");
  cmd->add_option("--worker-binary", o.worker_binary,
                  "the sift-worker that writes it (default: the one beside sift)");
}

int RunExportCommand(const CLI::App& app) {
  if (!app.get_subcommand("export")->parsed()) return -1;
  const ExportOptions& o = ExportOpts();
  int64_t study = o.study, number = o.trial;
  // --pareto only lists: the database is all it reads.
  if (o.pareto) return Choose(o, &study, &number);
  const std::string dir = !o.checkpoints.empty() ? o.checkpoints
                          : !o.run_dir.empty()   ? o.run_dir + "/checkpoints"
                                                 : std::string();
  if (dir.empty()) {
    std::cerr << "sift export: give --run DIR (a `sift run`'s directory) or --checkpoints DIR\n";
    return 2;
  }
  if (!o.pick.empty()) {
    if (int rc = Choose(o, &study, &number); rc >= 0) return rc;
  } else if (number < 0) {
    std::cerr << "sift export: give --trial N, --pick RULE or --pareto\n";
    return 2;
  }
  if (o.out.empty()) {
    std::cerr << "sift export: give --out (the file or folder to write)\n";
    return 2;
  }
  std::string error;
  const std::string checkpoint = FindTrialCheckpoint(dir, study, number, &error);
  if (checkpoint.empty()) {
    std::cerr << "sift export: " << error << "\n";
    return 1;
  }
  std::cerr << "sift export: trial " << number << " from " << checkpoint << "\n";
  const std::string worker = o.worker_binary.empty() ? SiblingWorker() : o.worker_binary;
  return RunProgram({worker, "export", "--checkpoint", checkpoint, "--out", o.out});
}

}  // namespace sift::coordinator

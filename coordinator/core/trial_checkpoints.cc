#include "coordinator/core/trial_checkpoints.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/checkpoint_names.h"
#include "coordinator/core/checkpoint_retention.h"
#include "coordinator/core/checkpoint_store.h"

namespace sift::coordinator {

using search::TrialState;

std::string TrialCheckpoints::Resume(const ServedStudy& study, int64_t number) {
  auto it = study.resume.find(number);
  return it == study.resume.end() ? "" : it->second;
}

std::vector<std::string> TrialCheckpoints::Older(int64_t study_id, int64_t number,
                                                 const std::string& newest) const {
  const auto limit = common::ParseCheckpointName(newest);
  if (!limit || !enabled()) return {};
  std::vector<std::pair<common::CheckpointPosition, std::string>> older;
  for (const auto& name : ListCheckpointFiles(StudyDir(study_id))) {
    const auto p = common::ParseCheckpointName(name);
    if (p && p->trial == number && *p < *limit) older.emplace_back(*p, name);
  }
  std::sort(older.begin(), older.end(),
            [](const auto& a, const auto& b) { return b.first < a.first; });
  std::vector<std::string> out;
  for (auto& [p, name] : older) out.push_back(std::move(name));
  return out;
}

Status TrialCheckpoints::CheckName(const std::string& name, int64_t number) {
  if (name.empty() || common::IsCheckpointNameOf(name, number)) return Status::Ok();
  return Status::Error(
      Status::Code::kInvalidArgument,
      "checkpoint '" + name + "' is not a checkpoint name of trial " + std::to_string(number));
}

std::string TrialCheckpoints::StudyDir(int64_t study_id) const {
  return dir_ + "/study-" + std::to_string(study_id);
}

void TrialCheckpoints::Prune(const ServedStudy& study, const std::vector<std::string>& only) {
  if (!enabled()) return;
  const StudyRunner& runner = *study.runner;
  const std::string& keep_name = runner.config().checkpoint.keep;
  const CheckpointKeep keep = keep_name == "all"    ? CheckpointKeep::kAll
                              : keep_name == "best" ? CheckpointKeep::kBest
                                                    : CheckpointKeep::kLatest;
  const std::string dir = StudyDir(runner.id());
  const std::vector<std::string> files = only.empty() ? ListCheckpointFiles(dir) : only;
  if (files.empty()) return;
  // Only the trials that have files matter, except that keeping the best compares them all:
  // every completion came here and walked all trials, a cost that grew with the study.
  std::set<int64_t> named;
  for (const auto& name : files) {
    const size_t end = name.find(".ckpt");  // partial writes go on past it
    if (end == std::string::npos) continue;
    if (auto p = common::ParseCheckpointName(name.substr(0, end + 5))) named.insert(p->trial);
  }
  std::set<int64_t> leased;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    leased = leases_.TrialsOf(runner.id());
  }
  for (const auto& [number, e] : study.evaluations) {  // a checkpoint waiting to be scored stays
    const bool open = e.state == EvaluationState::kPending || e.state == EvaluationState::kRunning;
    if (open) leased.insert(number);
  }
  std::map<int64_t, TrialCheckpointState> trials;
  const auto& view = runner.view();
  auto judge = [&](const search::TrialView& t) {
    TrialCheckpointState& c = trials[t.number];
    c.newest = Resume(study, t.number);
    c.settled = search::IsTerminal(t.state) && !leased.count(t.number);
    c.failed = t.state == TrialState::kFailed || t.state == TrialState::kDiverged;
    if (auto v = t.LastValue()) c.score = view.Score(*v);
  };
  if (keep == CheckpointKeep::kBest) {
    for (const auto& t : view.trials) judge(t);
  } else {  // the trials with files only, not a walk over the whole study per completion
    for (int64_t n : named) {
      if (n >= 0 && n < static_cast<int64_t>(view.trials.size())) judge(view.trials[n]);
    }
  }
  auto doomed = CheckpointsToDelete(files, trials, keep);
  // Population-based training: a checkpoint a member may still copy stays, whatever `keep`.
  const auto pinned = runner.CheckpointsToKeep();
  doomed.erase(std::remove_if(doomed.begin(), doomed.end(),
                              [&](const std::string& name) {
                                const auto p = common::ParseCheckpointName(name);
                                return p && p->step == 0 && pinned.count({p->trial, p->epoch});
                              }),
               doomed.end());
  if (doomed.empty()) return;
  std::vector<std::string> problems;
  const int64_t freed = DeleteCheckpointFiles(dir, doomed, &problems);
  for (const auto& p : problems) {
    spdlog::warn("[study {}] cannot delete an unneeded checkpoint: {}", runner.id(), p);
  }
  spdlog::debug("[study {}] deleted {} checkpoints (keep: {}), {:.1f} MB freed", runner.id(),
                doomed.size() - problems.size(), keep_name, freed / 1048576.0);
}

}  // namespace sift::coordinator

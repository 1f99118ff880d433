// The Coordinator's trial checkpoints: where each trial resumes, the older ones it falls back
// to, their names and folder, and the retention that deletes what no trial needs.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "common/checkpoint_names.h"
#include "coordinator/core/checkpoint_retention.h"
#include "coordinator/core/checkpoint_store.h"
#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

using search::TrialState;

std::string Coordinator::ResumeCheckpoint(const ServedStudy& study, int64_t number) {
  auto it = study.resume.find(number);
  return it == study.resume.end() ? "" : it->second;
}

std::vector<std::string> Coordinator::OlderCheckpoints(int64_t study_id, int64_t number,
                                                       const std::string& newest) const {
  const auto limit = common::ParseCheckpointName(newest);
  if (!limit || options_.checkpoint_dir.empty()) return {};
  std::vector<std::pair<common::CheckpointPosition, std::string>> older;
  for (const auto& name : ListCheckpointFiles(StudyCheckpointDir(study_id))) {
    const auto p = common::ParseCheckpointName(name);
    if (p && p->trial == number && *p < *limit) older.emplace_back(*p, name);
  }
  std::sort(older.begin(), older.end(),
            [](const auto& a, const auto& b) { return b.first < a.first; });
  std::vector<std::string> out;
  for (auto& [p, name] : older) out.push_back(std::move(name));
  return out;
}

Status Coordinator::RecordRedoneWork(const std::string& worker_id, const std::string& lease_id,
                                     double redone_seconds, const std::string& damaged) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  if (!std::isfinite(redone_seconds) || redone_seconds < 0) {
    return Status::Error(Status::Code::kInvalidArgument, "redone_seconds must be >= 0");
  }
  try {
    store_->SetRedoneSeconds(lease->study_id, lease_id, redone_seconds);
  } catch (const std::exception& e) {
    return StorageError(e, "the redone work");
  }
  spdlog::warn("[study {}] trial {}: checkpoint '{}' was damaged or missing; its worker fell back "
               "to an older one and redid {:.1f} s of work (counted as waste)",
               lease->study_id, lease->number, damaged, redone_seconds);
  return Status::Ok();
}

Status Coordinator::CheckCheckpointName(const std::string& name, int64_t number) const {
  if (name.empty() || common::IsCheckpointNameOf(name, number)) return Status::Ok();
  return Status::Error(Status::Code::kInvalidArgument,
                       "checkpoint '" + name + "' is not a checkpoint name of trial " +
                           std::to_string(number));
}

std::string Coordinator::StudyCheckpointDir(int64_t study_id) const {
  return options_.checkpoint_dir + "/study-" + std::to_string(study_id);
}

void Coordinator::PruneCheckpoints(const ServedStudy& study,
                                   const std::vector<std::string>& only) {
  if (options_.checkpoint_dir.empty()) return;
  const StudyRunner& runner = *study.runner;
  const std::string& keep_name = runner.config().checkpoint.keep;
  const CheckpointKeep keep = keep_name == "all"    ? CheckpointKeep::kAll
                              : keep_name == "best" ? CheckpointKeep::kBest
                                                    : CheckpointKeep::kLatest;
  const std::string dir = StudyCheckpointDir(runner.id());
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
  std::map<int64_t, TrialCheckpoints> trials;
  const auto& view = runner.view();
  auto judge = [&](const search::TrialView& t) {
    TrialCheckpoints& c = trials[t.number];
    c.newest = ResumeCheckpoint(study, t.number);
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
  const auto doomed = CheckpointsToDelete(files, trials, keep);
  if (doomed.empty()) return;
  std::vector<std::string> problems;
  const int64_t freed = DeleteCheckpointFiles(dir, doomed, &problems);
  for (const auto& p : problems) {
    spdlog::warn("[study {}] cannot delete an unneeded checkpoint: {}", runner.id(), p);
  }
  spdlog::debug("[study {}] deleted {} checkpoints (keep: {}), {:.1f} MB freed", runner.id(),
                doomed.size() - problems.size(), keep_name, freed / 1048576.0);
}

Status Coordinator::CheckpointPath(const std::string& worker_id, const std::string& lease_id,
                                   const std::string& name, std::string* path) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  std::optional<EvaluationLease> evaluation;
  if (study) {
    std::lock_guard<std::mutex> table(table_mu_);
    if (const EvaluationLease* e = leases_.FindEvaluation(lease_id);
        e && e->worker_id == worker_id && e->study_id == study->id()) {
      evaluation = *e;
    }
  }
  if (evaluation) {
    // An evaluation reads the one checkpoint it was given, and writes none.
    if (name != ResumeCheckpoint(*study, evaluation->number)) {
      return Status::Error(Status::Code::kInvalidArgument,
                           "'" + name + "' is not the checkpoint this evaluation scores");
    }
    *path = StudyCheckpointDir(evaluation->study_id) + "/" + name;
    return Status::Ok();
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  if (options_.checkpoint_dir.empty()) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "this coordinator keeps no checkpoints (start it with --checkpoint-dir)");
  }
  if (!common::IsCheckpointNameOf(name, lease->number)) {
    return Status::Error(Status::Code::kInvalidArgument,
                         "'" + name + "' is not a checkpoint name of trial " +
                             std::to_string(lease->number) + " (the lease's trial)");
  }
  *path = StudyCheckpointDir(lease->study_id) + "/" + name;
  return Status::Ok();
}

}  // namespace sift::coordinator

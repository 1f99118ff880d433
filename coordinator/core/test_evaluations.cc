// The test split, scored once: when a study completes, its best trial (by the objective, among
// those with a checkpoint) gets one evaluation, and any other finished trial gets one on request.
// A worker holds an evaluation under a lease like a trial's: a lost lease (expired, preempted,
// or the coordinator restarted) sends it back to pending, and the Store holds every state.
#include <spdlog/spdlog.h>

#include "coordinator/core/coordinator.h"
#include "coordinator/core/random_id.h"
#include "search/multi/objective_vectors.h"
#include "search/rng.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

bool HasModel(TrialState s) {
  return search::IsTerminal(s) && s != TrialState::kFailed && s != TrialState::kDiverged;
}

}  // namespace

void Coordinator::RestoreEvaluations(ServedStudy& study) {
  for (auto& e : store_->ListEvaluations(study.id())) {
    // Its lease ended with the old process: score it again (the worker's late answer is refused).
    if (e.state == EvaluationState::kRunning) e.state = EvaluationState::kPending;
    SetEvaluation(study, e);
  }
}

void Coordinator::SetEvaluation(ServedStudy& study, const EvaluationRecord& e) {
  study.evaluations[e.number] = e;
  int pending = 0, open = 0;
  for (const auto& [number, each] : study.evaluations) {
    pending += each.state == EvaluationState::kPending;
    open += each.state == EvaluationState::kPending || each.state == EvaluationState::kRunning;
  }
  study.pending_evaluations = pending;
  study.open_evaluations = open;
}

bool Coordinator::EvaluationsOpen() {
  for (const auto& study : studies_.All()) {
    if (study->open_evaluations > 0) return true;
  }
  return false;
}

Status Coordinator::QueueEvaluation(ServedStudy& study, int64_t number, const std::string& by,
                                    double now) {
  const StudyRunner& runner = *study.runner;
  const auto& trials = runner.view().trials;
  const std::string name =
      "trial " + std::to_string(number) + " of study " + std::to_string(runner.id());
  if (number < 0 || number >= static_cast<int64_t>(trials.size())) {
    return Status::Error(Status::Code::kNotFound, "no " + name);
  }
  if (runner.config().trial.is_command()) {  // the program owns its data, and any test split
    return Status::Error(Status::Code::kFailedPrecondition,
                         name + " is a command trial: Sift has no test split to score it on");
  }
  if (!HasModel(trials[number].state)) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         name + " is " + search::ToString(trials[number].state) +
                             ": only a finished trial that did not fail or diverge has a model "
                             "to score on the test split");
  }
  if (TrialCheckpoints::Resume(study, number).empty() || options_.checkpoint_dir.empty()) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         name +
                             " has no checkpoint to score (checkpoints are kept in the "
                             "coordinator's --checkpoint-dir)");
  }
  if (auto it = study.evaluations.find(number);
      it != study.evaluations.end() && it->second.state != EvaluationState::kFailed) {
    return Status::Ok();  // scored or on its way: the test split is scored once
  }
  EvaluationRecord e;
  e.study_id = runner.id();
  e.number = number;
  e.requested_by = by;
  e.requested_at = now;
  try {
    store_->UpsertEvaluation(e);
  } catch (const std::exception& ex) {
    return StorageError(ex, "the test evaluation");
  }
  SetEvaluation(study, e);
  spdlog::info("[study {}] trial {}: test evaluation queued ({})", runner.id(), number, by);
  return Status::Ok();
}

void Coordinator::QueueBestEvaluation(ServedStudy& study, double now) {
  const StudyRunner& runner = *study.runner;
  if (runner.config().trial.is_command()) return;  // see QueueEvaluation
  const auto& view = runner.view();
  std::optional<int64_t> best;
  for (const auto& t : view.trials) {
    const auto v = t.LastValue();
    if (!v || !HasModel(t.state) || TrialCheckpoints::Resume(study, t.number).empty()) continue;
    if (!best || search::BetterBestTrial(view, t, view.trials[static_cast<size_t>(*best)])) {
      best = t.number;
    }
  }
  if (!best || options_.checkpoint_dir.empty()) {
    spdlog::info("[study {}] no trial has a checkpoint: the test split is not scored", runner.id());
    return;
  }
  QueueEvaluation(study, *best, "best trial", now);
}

Status Coordinator::RequestEvaluation(int64_t study_id, int64_t number, const std::string& user,
                                      TrialSummary* out) {
  LockedStudy study = LockStudy(study_id);
  if (!study) {
    return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(study_id));
  }
  const StudyRunner* runner = study->runner.get();
  const double now = Now();
  if (Status s = QueueEvaluation(*study, number, user.empty() ? "unknown" : user, now); !s.ok()) {
    return s;
  }
  if (out) {
    std::vector<TrialRecord> trial;
    for (auto& t : store_->ListTrials(study_id)) {
      if (t.number == number) trial.push_back(std::move(t));
    }
    std::vector<ReportRecord> reports;
    for (auto& r : store_->ListReports(study_id)) {
      if (r.number == number) reports.push_back(std::move(r));
    }
    auto summaries = SummarizeTrials(*runner, trial, reports, store_->ListSegments(study_id), now,
                                     TrialExtrasOf(*study));
    if (!summaries.empty()) *out = std::move(summaries.front());
  }
  return Status::Ok();
}

bool Coordinator::AssignEvaluation(const std::string& worker_id, const Worker& w, double now,
                                   Assignment* out) {
  for (const auto& study : studies_.All()) {
    // Most studies have nothing pending: they are passed without waiting for their lock.
    if (study->pending_evaluations == 0 || w.cannot_run.count(study->id())) continue;
    std::lock_guard<std::mutex> lock(study->mu);
    if (study->dropped) continue;
    for (const auto& [number, e] : study->evaluations) {
      if (e.state != EvaluationState::kPending) continue;
      const int64_t study_id = study->id();
      EvaluationLease lease{RandomId("E-"), worker_id, study_id, number, now};
      EvaluationRecord running = e;
      running.state = EvaluationState::kRunning;
      try {
        store_->UpsertEvaluation(running);
      } catch (const std::exception& ex) {
        StorageError(ex, "the test evaluation's lease");
        return false;
      }
      SetEvaluation(*study, running);
      {
        std::lock_guard<std::mutex> table(table_mu_);
        leases_.GrantEvaluation(lease);
      }
      const common::StudyConfig& config = study->runner->config();
      const auto& trial = study->runner->view().trials.at(number);
      out->study_id = study_id;
      out->number = number;
      out->lease_id = lease.id;
      out->params = config.fixed;
      for (const auto& [k, v] : trial.params) out->params[k] = v;
      out->max_epochs = config.budget.max_epochs;
      out->start_epoch = trial.LastResource();
      out->seed = search::DeriveSeed(config.seed, {static_cast<uint64_t>(number)});
      out->data = config.data;
      out->data_json = study->data_json;
      out->metric = config.objective.metric;
      if (options_.shared_checkpoints) out->checkpoint_dir = checkpoints_.StudyDir(study_id);
      // Exactly the trial's model: no fallback to an older checkpoint of it.
      out->resume_checkpoint = TrialCheckpoints::Resume(*study, number);
      out->resume_fallbacks.clear();
      out->checkpoint_every_epochs = config.checkpoint.every_epochs;
      out->evaluate_test = true;
      spdlog::info("[study {}] trial {}: test evaluation of {} on {}", study_id, number,
                   out->resume_checkpoint, worker_id);
      return true;
    }
  }
  return false;
}

std::optional<Status> Coordinator::EndEvaluationLease(ServedStudy* study,
                                                      const std::string& worker_id,
                                                      const std::string& lease_id,
                                                      EvaluationState state,
                                                      const std::map<std::string, double>& metrics,
                                                      const std::string& error, bool cannot_run) {
  const double now = Now();
  EvaluationLease lease;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    const EvaluationLease* held = leases_.FindEvaluation(lease_id);
    if (!held) return std::nullopt;
    Worker* w = nullptr;
    if (Status s = workers_.Touch(worker_id, now, &w); !s.ok()) return s;
    if (held->worker_id != worker_id) {
      return Status::Error(Status::Code::kFailedPrecondition,
                           "lease '" + lease_id + "' belongs to another worker");
    }
    lease = *held;
  }
  if (!study || study->id() != lease.study_id) {  // granted since the caller looked
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + lease_id + "' is not held (expired, ended or never granted)");
  }
  EvaluationRecord e = study->evaluations.at(lease.number);
  e.state = cannot_run ? EvaluationState::kPending : state;
  if (cannot_run && options_.fail_unrunnable_studies) {
    // Embedded run: when no other live worker can run it, nobody else will come.
    std::lock_guard<std::mutex> table(table_mu_);
    if (!workers_.SomeLiveCanRun(lease.study_id, now, worker_id)) {
      e.state = EvaluationState::kFailed;
    }
  }
  if (e.state == EvaluationState::kDone) {
    e.metrics = metrics;
    e.error.clear();
  }
  if (e.state == EvaluationState::kFailed) {
    e.error = cannot_run ? "no worker can run it: " + error : error;
  }
  if (e.state == EvaluationState::kDone || e.state == EvaluationState::kFailed) e.ended_at = now;
  try {
    store_->UpsertEvaluation(e);
  } catch (const std::exception& ex) {
    return StorageError(ex, "the test evaluation");
  }
  SetEvaluation(*study, e);
  {
    std::lock_guard<std::mutex> table(table_mu_);
    leases_.EndEvaluation(lease_id);
    if (cannot_run) workers_.Refuse(worker_id, lease.study_id);
  }
  const std::string what = e.state == EvaluationState::kPending && cannot_run
                               ? "requeued: the worker cannot run it: " + error
                           : e.state == EvaluationState::kDone   ? "done"
                           : e.state == EvaluationState::kFailed ? "failed: " + error
                                                                 : "requeued: " + error;
  auto level = e.state == EvaluationState::kDone ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(level, "[study {}] trial {}: test evaluation {}", lease.study_id, lease.number, what);
  return Status::Ok();
}

void Coordinator::ExpireEvaluationLeases(double now) {
  std::vector<std::pair<std::string, int64_t>> expired;  // (lease, its study)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    for (const auto& id : leases_.ExpiredEvaluations(now, options_.lease_timeout_s)) {
      expired.emplace_back(id, leases_.FindEvaluation(id)->study_id);
    }
  }
  for (const auto& [id, study_id] : expired) {
    LockedStudy study = LockStudy(study_id);
    EvaluationLease lease;
    {
      std::lock_guard<std::mutex> table(table_mu_);
      const EvaluationLease* held = leases_.FindEvaluation(id);
      if (!held || now - held->last_seen <= options_.lease_timeout_s) continue;
      if (!study) {  // its study is not served here any more
        leases_.EndEvaluation(id);
        continue;
      }
      lease = *held;
    }
    EvaluationRecord e = study->evaluations.at(lease.number);
    e.state = EvaluationState::kPending;
    try {
      store_->UpsertEvaluation(e);
    } catch (const std::exception& ex) {
      StorageError(ex, "a test evaluation's lost lease");
      continue;
    }
    SetEvaluation(*study, e);
    {
      std::lock_guard<std::mutex> table(table_mu_);
      leases_.EndEvaluation(id);
    }
    spdlog::warn("[study {}] trial {}: test evaluation lease {} of worker {} expired; requeued",
                 lease.study_id, lease.number, id, lease.worker_id);
  }
}

}  // namespace sift::coordinator
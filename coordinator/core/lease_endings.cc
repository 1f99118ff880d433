// LeaseEndings (lease_endings.h): complete, fail, preempt, hand back, heartbeats and expiry.
#include "coordinator/core/lease_endings.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "coordinator/core/storage_error.h"

namespace sift::coordinator {

using search::TrialState;

void LeaseEndings::ApplyLeaseEnd(ServedStudy& study, const std::string& lease_id, double end) {
  std::optional<Ledger::Charge> charge;
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    if (!state_.leases_.Find(lease_id)) return;
    charge = state_.ledger_.Close(lease_id, end);
    state_.leases_.End(lease_id);
  }
  if (charge && charge->study_id == study.id()) {
    study.runner->ApplyCost(charge->number, charge->dollars, charge->seconds);
  }
}

Status LeaseEndings::CompleteTrial(const std::string& worker_id, const std::string& lease_id,
                                   const std::map<std::string, double>& final_metrics,
                                   const std::string& checkpoint) {
  CoordinatorState::LockedStudy study = state_.LockStudy(state_.StudyOfLease(lease_id));
  if (auto s = hooks_.EndEvaluationLease(study.study.get(), worker_id, lease_id,
                                         EvaluationState::kDone, final_metrics, "", false)) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = state_.CheckLease(study.study.get(), worker_id, lease_id, &lease, true); !s.ok()) {
    return s;
  }
  if (lease->completing.valid()) {  // a retry: the first one's answer
    const std::shared_future<void> first = lease->completing;
    study.lock.unlock();
    return AwaitCommit(first, "the completion");
  }
  if (Status s = TrialCheckpoints::CheckName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = study->runner.get();
  const auto& trial = runner->view().trials.at(lease->number);
  const double now = state_.Now();
  // A running trial that ends here trained to its last epoch; stopped or paused ones were
  // decided at their last report and keep that state and reason.
  const bool requeue = lease->study_paused && trial.state == TrialState::kRunning;
  if (requeue) {
    const std::string lease_copy = lease_id;
    return EndLeaseAndRequeue(*study, lease_copy, now, kStudyPausedSegment, checkpoint, 0.0);
  }
  const bool completes = trial.state == TrialState::kRunning;
  const std::string reason = "completed " + std::to_string(trial.LastResource()) + " epochs";
  const bool paused = trial.state == TrialState::kPaused;
  const char* segment_reason = completes                              ? "completed"
                               : paused                               ? "paused"
                               : trial.state == TrialState::kDiverged ? "diverged"
                                                                      : "stopped";
  // A paused trial's promotion resumes from this checkpoint; a finished trial's is its model.
  const std::string& kept = checkpoint;
  const int64_t study_id = lease->study_id;
  const int64_t number = lease->number;
  // The write commits with the study's lock let go (its reports and acquisitions go on and
  // share the transaction); memory takes the completion once it committed. Meanwhile the lease
  // stays held, and a retry of this completion waits for the same commit.
  const std::shared_future<void> committed =
      state_.commit_->Submit([this, study_id, number, completes, reason, final_metrics, lease_id,
                              now, segment_reason, kept] {
        if (completes) {
          state_.store_->UpdateTrialState(study_id, number, TrialState::kCompleted, reason, now);
        }
        if (!final_metrics.empty()) state_.store_->SetFinalMetrics(study_id, number, final_metrics);
        state_.store_->CloseSegment(study_id, lease_id, now, segment_reason, kept, 0.0);
      });
  {
    std::lock_guard<std::mutex> table(
        state_.table_mu_);  // written under both locks, read under either
    lease->completing = committed;
  }
  study.lock.unlock();
  const Status stored = AwaitCommit(committed, "the completion");
  study.lock.lock();
  if (!study->dropped) {  // no other call ends a lease that is being completed
    std::lock_guard<std::mutex> table(state_.table_mu_);
    if (TrialLease* held = state_.leases_.Find(lease_id)) held->completing = {};
  }
  if (!stored.ok()) return stored;
  if (study->dropped) return Status::Ok();  // stored; another coordinator serves it now
  if (completes) runner->ApplyState(number, TrialState::kCompleted);
  if (!kept.empty()) {
    study->resume[number] = kept;
    runner->ApplyCheckpoint(number, kept);
  }
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::info("[study {}] trial {} {}", study_id, number,
               completes ? reason : std::string("released (") + segment_reason + ")");
  hooks_.MaybeFinishStudy(*study, now);
  state_.checkpoints_.Prune(*study);
  return Status::Ok();
}

Status LeaseEndings::FailTrial(const std::string& worker_id, const std::string& lease_id,
                               const std::string& error, bool worker_cannot_run) {
  CoordinatorState::LockedStudy study = state_.LockStudy(state_.StudyOfLease(lease_id));
  if (auto s = hooks_.EndEvaluationLease(study.study.get(), worker_id, lease_id,
                                         EvaluationState::kFailed, {}, error, worker_cannot_run)) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = state_.CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok())
    return s;
  StudyRunner* runner = study->runner.get();
  const double now = state_.Now();
  if (worker_cannot_run) {
    // Not the trial's fault: requeue it for a worker that can, and offer this one no more.
    std::string name;
    {
      std::lock_guard<std::mutex> table(state_.table_mu_);
      const WorkerTable::Worker* w = state_.workers_.Find(worker_id);
      name = w ? w->record.name : worker_id;
    }
    const std::string why = "requeued: worker " + name + " cannot run it: " + error;
    try {
      state_.commit_->Run([&] {
        state_.store_->CloseSegment(lease->study_id, lease_id, now, "refused");
        state_.store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why,
                                        0);
      });
    } catch (const std::exception& e) {
      return StorageError(e, "the refusal");
    }
    const int64_t study_id = lease->study_id, number = lease->number;
    runner->ApplyState(number, TrialState::kPending);
    ApplyLeaseEnd(*study, lease_id, now);
    {
      std::lock_guard<std::mutex> table(state_.table_mu_);
      state_.workers_.Refuse(worker_id, study_id);
    }
    spdlog::warn("[study {}] trial {} {}; that worker gets none of the study's trials", study_id,
                 number, why);
    hooks_.MaybeFailUnrunnable(*study, error, now);
    return Status::Ok();
  }
  const std::string reason = "failed: " + error;
  try {
    state_.commit_->Run([&] {
      state_.store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kFailed, reason,
                                      now);
      state_.store_->CloseSegment(lease->study_id, lease_id, now, "failed");
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the failure");
  }
  const int64_t study_id = lease->study_id;
  const int64_t number = lease->number;
  runner->ApplyState(number, TrialState::kFailed);
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::warn("[study {}] trial {} {}", study_id, number, reason);
  hooks_.MaybeFinishStudy(*study, now);
  state_.checkpoints_.Prune(*study);
  return Status::Ok();
}

Status LeaseEndings::Heartbeat(const std::string& worker_id,
                               const std::vector<std::string>& lease_ids,
                               std::vector<std::string>* revoked) {
  std::lock_guard<std::mutex> table(state_.table_mu_);
  const double now = state_.Now();
  WorkerTable::Worker* w = nullptr;
  if (Status s = state_.workers_.Touch(worker_id, now, &w); !s.ok()) return s;
  for (auto& id : state_.leases_.Heartbeat(worker_id, lease_ids, now))
    revoked->push_back(std::move(id));
  return Status::Ok();
}

Status LeaseEndings::PreemptTrial(const std::string& worker_id, const std::string& lease_id,
                                  const std::string& checkpoint, const std::string& reason) {
  CoordinatorState::LockedStudy study = state_.LockStudy(state_.StudyOfLease(lease_id));
  if (auto s = hooks_.EndEvaluationLease(study.study.get(), worker_id, lease_id,
                                         EvaluationState::kPending, {},
                                         "preempted (" + reason + ")", false)) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = state_.CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok())
    return s;
  if (Status s = TrialCheckpoints::CheckName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = study->runner.get();
  const double now = state_.Now();
  double wasted = 0.0;
  if (checkpoint.empty()) {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    wasted = state_.ledger_.LostSecondsAt(lease_id, now);
  }
  // Its worker stopped because the study was paused (Ctrl-C on `sift run`): not a preemption.
  if (runner->state() == StudyState::kPaused) {
    return EndLeaseAndRequeue(*study, lease_id, now, kStudyPausedSegment, checkpoint, wasted);
  }
  const bool requeue = runner->view().trials.at(lease->number).state == TrialState::kRunning;
  const std::string why = "requeued: preempted (" + reason + ")";
  try {
    state_.commit_->Run([&] {
      state_.store_->CloseSegment(lease->study_id, lease_id, now, "preempted", checkpoint, wasted);
      if (requeue) {
        state_.store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why,
                                        0);
      }
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the preemption");
  }
  const int64_t study_id = lease->study_id, number = lease->number;
  if (requeue) runner->ApplyState(number, TrialState::kPending);
  if (!checkpoint.empty()) {
    study->resume[number] = checkpoint;
    runner->ApplyCheckpoint(number, checkpoint);
  }
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::warn("[study {}] trial {}: worker {} preempted ({}); {}{}", study_id, number, worker_id,
               reason, requeue ? "requeued" : "released",
               checkpoint.empty() ? "" : ", resumes from " + checkpoint);
  state_.checkpoints_.Prune(*study);
  return Status::Ok();
}

void LeaseEndings::ExpireLeases(double now) {
  std::vector<std::pair<std::string, int64_t>> expired;  // (lease, its study)
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    for (const auto& id : state_.leases_.Expired(now, state_.options_.lease_timeout_s)) {
      expired.emplace_back(id, state_.leases_.Find(id)->study_id);
    }
  }
  // One study's lock at a time; each lease is looked at again under it (a heartbeat or its end
  // may have come since).
  for (const auto& [id, study_id] : expired) {
    CoordinatorState::LockedStudy study = state_.LockStudy(study_id);
    if (!study) continue;  // not served here any more: its leases went with it
    TrialLease lease;
    double end = 0, wasted = 0;
    {
      std::lock_guard<std::mutex> table(state_.table_mu_);
      const TrialLease* held = state_.leases_.Find(id);
      if (!held || now - held->last_seen <= state_.options_.lease_timeout_s) continue;
      if (held->completing.valid()) continue;  // ends as its completion commits
      lease = *held;
      // A lost VM is billed to its last sign of life; the work since its last checkpoint is lost.
      end = std::max(state_.ledger_.Start(id).value_or(lease.last_seen), lease.last_seen);
      wasted = state_.ledger_.LostSecondsAt(id, end);
    }
    StudyRunner* runner = study->runner.get();
    const bool requeue = runner->view().trials.at(lease.number).state == TrialState::kRunning;
    try {
      state_.commit_->Run([&] {
        state_.store_->CloseSegment(lease.study_id, id, end, "expired", "", wasted);
        if (requeue) {
          state_.store_->UpdateTrialState(lease.study_id, lease.number, TrialState::kPending,
                                          "requeued: lease expired", 0);
        }
      });
    } catch (const std::exception& e) {
      StorageError(e, "a lease expiry");
      continue;
    }
    if (requeue) runner->ApplyState(lease.number, TrialState::kPending);
    ApplyLeaseEnd(*study, id, end);
    state_.checkpoints_.Prune(*study);
    spdlog::warn("[study {}] trial {}: lease {} of worker {} expired (no heartbeat for {:.0f} s){}",
                 lease.study_id, lease.number, id, lease.worker_id, now - lease.last_seen,
                 requeue ? "; requeued" : "");
  }
}

Status LeaseEndings::EndLeaseAndRequeue(ServedStudy& study, const std::string& lease_id, double end,
                                        const std::string& reason, const std::string& checkpoint,
                                        double wasted) {
  TrialLease lease;
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    lease = *state_.leases_.Find(lease_id);
  }
  StudyRunner* runner = study.runner.get();
  const bool requeue = runner->view().trials.at(lease.number).state == TrialState::kRunning;
  try {
    state_.commit_->Run([&] {
      state_.store_->CloseSegment(lease.study_id, lease_id, end, reason, checkpoint, wasted);
      if (requeue) {
        state_.store_->UpdateTrialState(lease.study_id, lease.number, TrialState::kPending,
                                        "requeued: " + reason, 0);
      }
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the lease's end");
  }
  if (requeue) runner->ApplyState(lease.number, TrialState::kPending);
  if (!checkpoint.empty()) {
    study.resume[lease.number] = checkpoint;
    runner->ApplyCheckpoint(lease.number, checkpoint);
  }
  ApplyLeaseEnd(study, lease_id, end);
  spdlog::info("[study {}] trial {} handed back ({}){}", lease.study_id, lease.number, reason,
               checkpoint.empty() ? "" : "; resumes from " + checkpoint);
  state_.checkpoints_.Prune(study);
  return Status::Ok();
}

}  // namespace sift::coordinator

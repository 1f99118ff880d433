// The Coordinator's report path: each epoch's report decided under its study's lock, queued
// to the group commit, and answered once it committed (or taken back if the write failed).
// ReportProgressAsync reads as its steps: a retry answered as before, the report checked,
// decided, recorded, queued, and applied to memory; the steps that need no Coordinator state
// are the functions below.
#include <spdlog/spdlog.h>

#include <cmath>

#include "common/hparams/hparams.h"
#include "common/metric_json.h"
#include "common/metric_names.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/core/stored_study.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

// Why a report ends its trial as DIVERGED ("val_loss NaN at epoch 2"), or "" when it does not:
// a non-finite objective always does, a non-finite training loss under stop_on_divergence.
std::string DivergenceReason(const common::StudyConfig& config, int64_t epoch,
                             const std::map<std::string, double>& metrics) {
  auto non_finite = [&](const std::string& name) -> std::string {
    auto it = metrics.find(name);
    if (it == metrics.end() || std::isfinite(it->second)) return "";
    return name + " " + common::NonFiniteName(it->second) + " at epoch " + std::to_string(epoch);
  };
  std::string why = non_finite(config.objective.metric);
  common::HParams hp;
  if (why.empty() && common::ParseHParams(config.fixed, &hp).empty() && hp.stop_on_divergence) {
    why = non_finite(common::kTrainLoss);
  }
  return why;
}

// Whether trial `number` can take this report: it names the objective, the trial is running,
// its checkpoint is the trial's, and it is the next epoch within the budget.
Status CheckReport(const StudyRunner& runner, int64_t number, int64_t epoch,
                   const std::map<std::string, double>& metrics, const std::string& checkpoint) {
  const auto& trial = runner.view().trials.at(number);
  const std::string& metric = runner.config().objective.metric;
  if (!metrics.count(metric)) {
    return Status::Error(Status::Code::kInvalidArgument,
                         "report for trial " + std::to_string(number) +
                             " lacks the objective metric '" + metric + "'");
  }
  if (trial.state != TrialState::kRunning) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "trial " + std::to_string(number) + " is " +
                             search::ToString(trial.state) + ", not running");
  }
  if (Status s = TrialCheckpoints::CheckName(checkpoint, number); !s.ok()) return s;
  if (epoch != trial.LastResource() + 1 || epoch > runner.config().budget.max_epochs) {
    return Status::Error(Status::Code::kInvalidArgument,
                         "trial " + std::to_string(number) + ": epoch " + std::to_string(epoch) +
                             " reported, expected " + std::to_string(trial.LastResource() + 1));
  }
  return Status::Ok();
}

// The trial's state once `decision` applies: a study pause's PAUSE keeps it RUNNING until its
// worker hands back; a rung's parks it.
TrialState NextState(TrialState now, const search::Decision& decision, bool diverged,
                     bool study_paused) {
  if (diverged) return TrialState::kDiverged;
  if (decision.action == search::Action::kStop) return TrialState::kStopped;
  if (decision.action == search::Action::kPause && !study_paused) return TrialState::kPaused;
  return now;
}

// The report as the Store keeps it.
ReportRecord ReportOf(const TrialLease& lease, int64_t seq, int64_t epoch,
                      const std::map<std::string, double>& metrics, const std::string& checkpoint,
                      const search::Decision& decision, double now) {
  ReportRecord r;
  r.study_id = lease.study_id;
  r.number = lease.number;
  r.epoch = epoch;
  r.metrics = metrics;
  r.lease_id = lease.id;
  r.seq = seq;
  r.decision = search::ToString(decision.action);
  r.reason = decision.reason;
  r.created_at = now;
  r.checkpoint = checkpoint;
  return r;
}

// The report's line: at most about one info line a second per study (progress_log.h); the
// rest at debug, formatted only when shown.
void LogReport(ProgressLog& progress, const ReportRecord& r, const std::string& metric,
               int64_t max_epochs, const std::string& diverged) {
  int64_t unshown = 0;
  const auto level =
      progress.TakeInfo(r.study_id, &unshown) ? spdlog::level::info : spdlog::level::debug;
  if (spdlog::should_log(level)) {
    std::string shown;
    for (const auto& [k, v] : r.metrics) {
      if (k == metric || k == common::kTrainLoss) shown += fmt::format(" {}={:.4f}", k, v);
    }
    spdlog::log(level, "[study {}] trial {} epoch {}/{}:{} -> {}{}{}", r.study_id, r.number,
                r.epoch, max_epochs, shown, r.decision,
                r.reason.empty() ? "" : " (" + r.reason + ")",
                unshown == 0 ? "" : fmt::format(" [{} more reports since the last line]", unshown));
  }
  if (!diverged.empty()) {
    spdlog::warn("[study {}] trial {} DIVERGED: {}", r.study_id, r.number, diverged);
  }
}

// What a lease knows of its newest report, for report `seq` of `worker_id` on it (`held`: the
// lease, or null; the caller holds the table lock). known: the lease can tell whether `seq`
// is new (else the Store is asked); retried: `seq` is its newest, answered as it was.
struct NewestReport {
  bool known = false, retried = false;
  search::Decision decision;
  std::shared_future<void> commit;
};
NewestReport NewestReportOf(const TrialLease* held, int64_t study_id, const std::string& worker_id,
                            int64_t seq) {
  NewestReport out;
  out.known = held && held->study_id == study_id && held->worker_id == worker_id &&
              held->reports_known && (!held->has_report || seq >= held->last_seq);
  out.retried = out.known && held->has_report && seq == held->last_seq;
  if (out.retried) {
    out.decision = held->last_decision;
    out.commit = held->last_commit;
  }
  return out;
}

// A retry's answer: the first one's, once its commit is over. Writes are answered in order, so
// while it runs an empty write queued now is answered right after it.
void AnswerRetry(GroupCommit& commit, const NewestReport& first, Coordinator::ReportAnswer answer) {
  auto reply = [first, answer = std::move(answer)] {
    const std::shared_future<void>& done = first.commit;
    answer(done.valid() ? AwaitCommit(done, "the report") : Status::Ok(), first.decision);
  };
  const std::shared_future<void>& done = first.commit;
  if (!done.valid() || done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    reply();
  } else {
    commit.Submit([] {}, [reply = std::move(reply)](std::exception_ptr) { reply(); });
  }
}

}  // namespace

Status Coordinator::ReportProgress(const std::string& worker_id, const std::string& lease_id,
                                   int64_t seq, int64_t epoch,
                                   const std::map<std::string, double>& metrics,
                                   const std::string& checkpoint, search::Decision* decision) {
  std::promise<Status> answered;
  std::future<Status> status = answered.get_future();
  ReportProgressAsync(worker_id, lease_id, seq, epoch, metrics, checkpoint,
                      [&](const Status& s, const search::Decision& d) {
                        *decision = d;
                        answered.set_value(s);
                      });
  return status.get();
}

void Coordinator::ReportProgressAsync(const std::string& worker_id, const std::string& lease_id,
                                      int64_t seq, int64_t epoch,
                                      const std::map<std::string, double>& metrics,
                                      const std::string& checkpoint, ReportAnswer answer) {
  // Under its study's lock, which its Store writes are submitted under (empty: no such lease).
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  std::unique_lock<std::mutex>& lock = study.lock;
  search::Decision decided;
  search::Decision* decision = &decided;
  // What needs no write is answered at once, outside the study's lock.
  auto answer_now = [&](const Status& s) {
    if (lock.owns_lock()) lock.unlock();
    answer(s, decided);
  };
  // A retried report (same lease and seq) gets the answer it got the first time, even when
  // that answer ended the lease: from memory when the lease knows its newest report (once
  // that report's commit, which may still be running, is over), else from the Store.
  NewestReport newest;
  if (study) {
    std::lock_guard<std::mutex> table(table_mu_);
    newest = NewestReportOf(leases_.Find(lease_id), study->id(), worker_id, seq);
  }
  if (newest.retried) {
    lock.unlock();
    return AnswerRetry(*commit_, newest, std::move(answer));
  }
  if (!newest.known) {
    try {
      if (auto prior = store_->FindReport(lease_id, seq)) {
        *decision = DecisionOf(*prior);
        return answer_now(Status::Ok());
      }
    } catch (const std::exception& e) {
      return answer_now(StorageError(e, "the report lookup"));
    }
  }
  // Checked, then decided.
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) {
    return answer_now(s);
  }
  StudyRunner* runner = study->runner.get();
  if (Status s = CheckReport(*runner, lease->number, epoch, metrics, checkpoint); !s.ok()) {
    return answer_now(s);
  }
  const auto& trial = runner->view().trials.at(lease->number);
  const std::string& metric = runner->config().objective.metric;
  const double now = Now();
  double spent = 0;  // the study's dollars now, for its budget (one table lock for both)
  std::optional<Ledger::Charge> open;  // the lease's charge so far, for measured metrics
  {
    std::lock_guard<std::mutex> table(table_mu_);
    lease->last_seen = now;
    spent = ledger_.StudyDollars(lease->study_id, now);
    if (runner->MeasuresCost()) open = ledger_.ChargeAt(lease_id, now);
  }
  // A study that names dollars or train_seconds gets them measured here, with each report, and
  // stored with it: a restart replays what was decided on.
  std::map<std::string, double> measured;
  if (runner->MeasuresCost()) {
    measured = metrics;
    runner->AddMeasured(lease->number, open ? open->dollars : 0, open ? open->seconds : 0,
                        &measured);
  }
  const std::map<std::string, double>& reported = runner->MeasuresCost() ? measured : metrics;
  // A non-finite objective (or training loss, under stop_on_divergence) ends the trial as
  // DIVERGED: the scheduler never sees the value, and the trial is not retried.
  const std::string diverged = DivergenceReason(runner->config(), epoch, metrics);
  costs_.UpdateQuotaUse(*runner, now);
  *decision = !diverged.empty() ? search::Decision::Stop(diverged)
                                : runner->Decide(lease->number, epoch, reported, now, spent);
  // A paused study's trial hands back at this epoch: PAUSE makes its worker checkpoint and
  // release the lease; the trial stays RUNNING until then and is requeued by CompleteTrial.
  bool paused_by_it = false;
  if (runner->state() == StudyState::kPaused && decision->action == search::Action::kContinue &&
      epoch < runner->config().budget.max_epochs) {
    *decision = search::Decision::Pause("study paused");
    paused_by_it = !lease->study_paused;
    lease->study_paused = true;
  }
  auto report = std::make_shared<ReportRecord>(
      ReportOf(*lease, seq, epoch, reported, checkpoint, *decision, now));
  const ReportRecord& r = *report;
  const TrialState next_state =
      NextState(trial.state, *decision, !diverged.empty(), lease->study_paused);
  // The worker checkpointed this epoch before reporting it: that is now the trial's newest.
  const std::string previous = checkpoint.empty() ? "" : TrialCheckpoints::Resume(*study, r.number);
  // Once committed: a failed write is taken back, and only then can the checkpoint it
  // superseded go (the directory is swept when the lease ends); both under the study's lock, so
  // not on the writer thread, which callers holding that lock wait for. Then the worker hears
  // the decision.
  const bool prunes = !previous.empty() && previous != checkpoint;
  auto committed = [this, served = study.study, report, previous, paused_by_it, diverged, metric,
                    max_epochs = runner->config().budget.max_epochs, decided,
                    answer = std::move(answer)](std::exception_ptr error) {
    const ReportRecord& r = *report;
    if (error) {
      {
        std::lock_guard<std::mutex> relock(served->mu);
        if (!served->dropped) {
          UndoReport(*served, r.lease_id, r.number, r.seq, r.checkpoint, previous, paused_by_it);
        }
      }
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        return answer(StorageError(e, "the report"), decided);
      } catch (...) {
        return answer(StorageError(std::runtime_error("unknown error"), "the report"), decided);
      }
    }
    if (!previous.empty() && previous != r.checkpoint) {
      std::lock_guard<std::mutex> relock(served->mu);
      if (!served->dropped) checkpoints_.Prune(*served, {previous});
    }
    LogReport(progress_, r, metric, max_epochs, diverged);
    answer(Status::Ok(), decided);
  };
  // Queued: the write joins the batch the writer commits next (group commit). Memory takes the
  // report now, in its study lock's order (the order of its writes), so the next report decides
  // on it; the worker hears the decision only once it committed, and UndoReport takes it back
  // if it did not.
  const bool state_changes = next_state != trial.state;
  const double ended_at = search::IsTerminal(next_state) ? now : 0;
  const std::shared_future<void> done = commit_->Submit(
      [this, report, state_changes, next_state, ended_at] {
        store_->InsertReport(*report);
        if (state_changes) {
          store_->UpdateTrialState(report->study_id, report->number, next_state, report->reason,
                                   ended_at);
        }
      },
      [this, prunes, committed = std::move(committed)](std::exception_ptr error) {
        if (error || prunes) {
          after_commit_->Post([committed, error] { committed(error); });
        } else {
          committed(nullptr);
        }
      });
  // Applied to memory.
  lease->has_report = true;
  lease->last_seq = seq;
  lease->last_decision = *decision;
  lease->last_commit = done;
  // The view holds finite objective values only; a restart replays the same (RestoreFrom).
  runner->ApplyReport(r.number, epoch, r.metrics);
  runner->ApplyState(r.number, next_state);
  if (!checkpoint.empty()) {
    {
      std::lock_guard<std::mutex> table(table_mu_);
      ledger_.NoteCheckpoint(lease_id, now);
    }
    study->resume[r.number] = checkpoint;
    runner->ApplyCheckpoint(r.number, checkpoint);
  }
}

void Coordinator::UndoReport(ServedStudy& study, const std::string& lease_id, int64_t number,
                             int64_t seq, const std::string& checkpoint,
                             const std::string& previous_checkpoint, bool paused_by_it) {
  RereadStudy(study);
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (TrialLease* lease = leases_.Find(lease_id); lease && lease->last_seq == seq) {
      // Its previous report's answer is in the Store; a retry of this one is a new report.
      lease->reports_known = false;
      if (paused_by_it) lease->study_paused = false;
    }
  }
  auto resume = study.resume.find(number);
  if (!checkpoint.empty() && resume != study.resume.end() && resume->second == checkpoint) {
    if (previous_checkpoint.empty()) {
      study.resume.erase(resume);
    } else {
      resume->second = previous_checkpoint;
    }
  }
}

}  // namespace sift::coordinator

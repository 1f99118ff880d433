// Acquisition (acquisition.h): registration, AcquireTrial, and the lease taken back when its
// write fails.
#include "coordinator/core/acquisition.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "common/checkpoint_names.h"
#include "coordinator/core/pbt_exploits.h"
#include "coordinator/core/random_id.h"
#include "coordinator/core/storage_error.h"

namespace sift::coordinator {

using search::TrialState;

Status Acquisition::RegisterWorker(WorkerRecord request, WorkerRecord* out) {
  if (request.market != "spot" && request.market != "on-demand") {
    return Status::Error(Status::Code::kInvalidArgument,
                         "market: '" + request.market + "' is not one of on-demand, spot");
  }
  if (request.price_per_hour < 0 || !std::isfinite(request.price_per_hour)) {
    return Status::Error(Status::Code::kInvalidArgument, "price_per_hour: must be >= 0");
  }
  if (request.price_per_hour == 0) {
    std::string problem = state_.options_.catalog.Lookup(request.instance_type, request.market,
                                                         &request.price_per_hour);
    if (!problem.empty()) {
      return Status::Error(Status::Code::kInvalidArgument,
                           problem + " (pass --price-per-hour or add it to the price catalog)");
    }
  }
  const double now = state_.Now();
  request.id = RandomId("w-");
  request.registered_at = now;
  try {
    state_.store_->UpsertWorker(request);
  } catch (const std::exception& e) {
    return StorageError(e, "the worker");
  }
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    state_.workers_.Add(request, now);
  }
  spdlog::info("worker {} registered: {} {} {} at ${:.4f}/h, {} threads", request.id, request.name,
               request.instance_type, request.market, request.price_per_hour, request.threads);
  *out = request;
  return Status::Ok();
}

Status Acquisition::AcquireTrial(const std::string& worker_id, AcquireResult* result,
                                 Assignment* out, double idle_exit_s) {
  const double now = state_.Now();
  WorkerTable::Worker me;  // the worker as it is now (a copy: the table lock is not held below)
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    WorkerTable::Worker* w = nullptr;
    if (Status s = state_.workers_.Touch(worker_id, now, &w); !s.ok()) return s;
    me = *w;
  }
  // Test evaluations first: short, and a finished study's report waits for its best trial's.
  if (hooks_.AssignEvaluation(worker_id, me, now, out)) {
    *result = AcquireResult::kAssigned;
    return Status::Ok();
  }
  // The studies in id order, one lock at a time, and those busy (deciding or committing under
  // their lock) last: a worker waits for a busy study only when no other study has work.
  std::vector<std::shared_ptr<ServedStudy>> busy;
  std::optional<Status> assigned;
  for (const auto& study : state_.studies_.All()) {
    if (me.cannot_run.count(study->id())) continue;
    std::unique_lock<std::mutex> lock(study->mu, std::try_to_lock);
    if (!lock.owns_lock()) {
      busy.push_back(study);
    } else if ((assigned = AssignTrial(study, lock, worker_id, me, now, out))) {
      break;
    }
  }
  for (size_t i = 0; !assigned && i < busy.size(); ++i) {
    std::unique_lock<std::mutex> lock(busy[i]->mu);
    assigned = AssignTrial(busy[i], lock, worker_id, me, now, out);
  }
  if (assigned) {
    if (assigned->ok()) *result = AcquireResult::kAssigned;
    return *assigned;
  }
  bool all_finished = true;
  for (const auto& study : state_.studies_.All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    if (study->dropped) continue;
    hooks_.MaybeFinishStudy(*study, now);
    all_finished &= !IsOpen(study->runner->state());
  }
  all_finished &=
      !hooks_.EvaluationsOpen();  // after the loop: a study it ended may have queued one
  double idle_since = now;
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    const WorkerTable::Worker* found = state_.workers_.Find(worker_id);
    const WorkerTable::Worker& w = found ? *found : me;
    state_.ledger_.OpenIdle(worker_id, w.last_study_id, now, w.record.price_per_hour,
                            w.record.market);
    idle_since = state_.ledger_.IdleOf(worker_id)->start;
  }
  *result = AcquireResult::kNoWork;
  if (state_.options_.shutdown_when_idle && all_finished) {
    CloseIdle(worker_id, now, "shutdown");
    *result = AcquireResult::kShutdown;
  } else if (idle_exit_s > 0 && now - idle_since >= idle_exit_s) {
    spdlog::info("worker {} ({}) found no work for {:.0f} s (its idle exit): told to leave",
                 worker_id, me.record.name, now - idle_since);
    CloseIdle(worker_id, now, "idle-exit");
    *result = AcquireResult::kShutdown;
  }
  return Status::Ok();
}

std::optional<Status> Acquisition::AssignTrial(const std::shared_ptr<ServedStudy>& served,
                                               std::unique_lock<std::mutex>& lock,
                                               const std::string& worker_id,
                                               const WorkerTable::Worker& w, double now,
                                               Assignment* out) {
  ServedStudy& study = *served;
  if (study.dropped) return std::nullopt;
  // Trials decided on a view holding a trial whose write failed are not stored: reread first.
  if (study.trial_write_failed) RereadStudy(study);
  StudyRunner* runner = study.runner.get();
  const int64_t study_id = study.id();
  std::string why_none;
  state_.costs_.UpdateQuotaUse(*runner, now);
  auto next = runner->PickNext(now, state_.StudyDollars(study_id, now), &why_none);
  if (!next) return std::nullopt;
  // A PBT member that copies another: the file is copied now, under the study's lock; a lease
  // that fails to commit leaves the copy, and the same plan (a function of the stored history)
  // copies the same file again when the member is leased next.
  std::optional<ExploitRecord> exploit;
  if (next->exploit) {
    exploit = CopyForExploit(state_.checkpoints_, study_id, *next->exploit,
                             runner->view().trials.at(next->number).params, now);
    if (!exploit) next->params = runner->view().trials.at(next->number).params;
  }
  TrialLease lease{RandomId("L-"), worker_id, study_id, next->number, now};
  SegmentRecord seg;
  seg.lease_id = lease.id;
  seg.worker_id = worker_id;
  seg.study_id = study_id;
  seg.number = next->number;
  seg.start = now;
  seg.price_per_hour = w.record.price_per_hour;
  seg.market = w.record.market;
  seg.start_epoch = next->start_epoch;
  TrialRecord t;
  t.study_id = study_id;
  t.number = next->number;
  t.params = next->params;
  t.state = TrialState::kRunning;
  t.created_at = now;
  // Memory takes the lease now, in the order of the study's writes, and the write joins the
  // next batch; the study's lock is let go while it commits, so its reports and other
  // acquisitions go on (and share the transaction). The worker hears of the lease only once
  // it committed; UndoAssignment takes it back if it did not.
  std::shared_future<void> committed = state_.commit_->Submit(
      [this, served, t, seg, exploit, is_new = next->is_new] {
        if (is_new) {
          // Numbers follow one another: one stored after a number that failed would leave a gap
          // the study could not be restored across.
          if (served->trial_write_failed) {
            throw std::runtime_error("an earlier trial of study " + std::to_string(t.study_id) +
                                     " could not be stored");
          }
          state_.store_->InsertTrial(t);
        } else {
          state_.store_->UpdateTrialState(t.study_id, t.number, TrialState::kRunning, "", 0);
        }
        if (exploit) state_.store_->InsertExploit(*exploit);
        state_.store_->OpenSegment(seg);
      },
      [served, is_new = next->is_new](std::exception_ptr error) {
        if (error && is_new) served->trial_write_failed = true;
      });
  if (next->is_new) runner->ApplyNewTrial(next->number, next->params);
  runner->ApplyState(next->number, TrialState::kRunning);
  if (exploit) {
    runner->ApplyExploit(next->number, exploit->params_after);
    study.resume[next->number] = common::EpochCheckpointName(next->number, exploit->epoch);
  }
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    state_.leases_.Grant(lease);
    state_.ledger_.Open(seg);
    state_.workers_.NoteStudy(worker_id, study_id);
  }
  const common::StudyConfig& config = runner->config();
  out->study_id = study_id;
  out->number = next->number;
  out->lease_id = lease.id;
  out->params = config.fixed;
  for (const auto& [k, v] : next->params) out->params[k] = v;
  out->max_epochs = config.budget.max_epochs;
  out->start_epoch = next->start_epoch;
  out->seed = search::DeriveSeed(config.seed, {static_cast<uint64_t>(next->number)});
  out->data = config.data;
  out->data_json = study.data_json;
  out->metric = config.objective.metric;
  if (!state_.options_.checkpoint_dir.empty() && state_.options_.shared_checkpoints) {
    out->checkpoint_dir = state_.checkpoints_.StudyDir(study_id);
  }
  out->resume_checkpoint = TrialCheckpoints::Resume(study, next->number);
  // An exploited member's older checkpoints are its own old lineage: never a fallback for it.
  if (!exploit) {
    out->resume_fallbacks =
        state_.checkpoints_.Older(study_id, next->number, out->resume_checkpoint);
  }
  out->checkpoint_every_epochs = config.checkpoint.every_epochs;
  out->trial = config.trial;
  lock.unlock();
  if (Status stored = AwaitCommit(committed, "the new lease"); !stored.ok()) {
    lock.lock();
    if (!study.dropped) UndoAssignment(study, lease.id);
    return stored;
  }
  CloseIdle(worker_id, now, "leased");
  if (exploit) {
    spdlog::info("[study {}] trial {} {}", study_id, next->number, exploit->reason);
  }
  spdlog::info("[study {}] trial {} {} on {}: {}", study_id, next->number,
               next->is_new ? "starts" : "resumes at epoch " + std::to_string(next->start_epoch),
               worker_id, search::ToString(next->params));
  return Status::Ok();
}

void Acquisition::UndoAssignment(ServedStudy& study, const std::string& lease_id) {
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    if (state_.leases_.Find(lease_id)) {
      state_.ledger_.Close(lease_id,
                           state_.ledger_.Start(lease_id).value_or(0));  // no time, no dollars
      state_.leases_.End(lease_id);
    }
  }
  RereadStudy(study);
}

void Acquisition::RereadStudy(ServedStudy& study) {
  // Writes queued after the failed one were decided on a view that held it; let them land (or
  // fail) first, so that the Store read below is final for everything memory applied. (The
  // study's lock is held: its own later writes are all queued already.)
  try {
    state_.commit_->Run([] {});
  } catch (const std::exception&) {
  }
  const int64_t study_id = study.id();
  try {
    study.runner->RebuildFrom(state_.store_->ListTrials(study_id),
                              [&](const std::function<void(const ReportRecord&)>& apply) {
                                state_.store_->ForEachReport(study_id, apply);
                              });
    // Pauses' and preemptions' checkpoints, which the reports do not name.
    for (const auto& seg : state_.store_->ListSegments(study_id)) {
      if (seg.end && seg.number < static_cast<int64_t>(study.runner->view().trials.size())) {
        study.runner->ApplyCheckpoint(seg.number, seg.checkpoint);
      }
    }
    study.trial_write_failed = false;
  } catch (const std::exception& e) {
    spdlog::error("[study {}] could not reread its history after a failed write: {}", study_id,
                  e.what());
  }
}

void Acquisition::CloseIdle(const std::string& worker_id, double end, const char* reason) {
  std::optional<IdleSegmentRecord> idle;
  {
    std::lock_guard<std::mutex> table(state_.table_mu_);
    idle = state_.ledger_.CloseIdle(worker_id, end, reason);
  }
  if (!idle) return;
  try {
    state_.store_->InsertIdleSegment(*idle);
  } catch (const std::exception& e) {
    StorageError(e, "an idle stretch");  // logged; the ledger of trials is unaffected
  }
}

}  // namespace sift::coordinator

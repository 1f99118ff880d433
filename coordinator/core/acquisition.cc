// The Coordinator's acquisition: workers register, ask for work and get a trial (a new
// suggestion, a requeued one or a promotion) under a lease; an assignment whose write fails is
// taken back.
#include <spdlog/spdlog.h>

#include <cmath>

#include "coordinator/core/coordinator.h"
#include "coordinator/core/random_id.h"

namespace sift::coordinator {

using search::TrialState;

Status Coordinator::RegisterWorker(WorkerRecord request, WorkerRecord* out) {
  if (request.market != "spot" && request.market != "on-demand") {
    return Status::Error(Status::Code::kInvalidArgument,
                         "market: '" + request.market + "' is not one of on-demand, spot");
  }
  if (request.price_per_hour < 0 || !std::isfinite(request.price_per_hour)) {
    return Status::Error(Status::Code::kInvalidArgument, "price_per_hour: must be >= 0");
  }
  if (request.price_per_hour == 0) {
    std::string problem =
        options_.catalog.Lookup(request.instance_type, request.market, &request.price_per_hour);
    if (!problem.empty()) {
      return Status::Error(Status::Code::kInvalidArgument,
                           problem + " (pass --price-per-hour or add it to the price catalog)");
    }
  }
  const double now = Now();
  request.id = RandomId("w-");
  request.registered_at = now;
  try {
    store_->UpsertWorker(request);
  } catch (const std::exception& e) {
    return StorageError(e, "the worker");
  }
  {
    std::lock_guard<std::mutex> table(table_mu_);
    workers_.Add(request, now);
  }
  spdlog::info("worker {} registered: {} {} {} at ${:.4f}/h, {} threads", request.id, request.name,
               request.instance_type, request.market, request.price_per_hour, request.threads);
  *out = request;
  return Status::Ok();
}

Status Coordinator::AcquireTrial(const std::string& worker_id, AcquireResult* result,
                                 Assignment* out, double idle_exit_s) {
  const double now = Now();
  Worker me;  // the worker as it is now (a copy: the table lock is not held below)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    Worker* w = nullptr;
    if (Status s = workers_.Touch(worker_id, now, &w); !s.ok()) return s;
    me = *w;
  }
  // Test evaluations first: short, and a finished study's report waits for its best trial's.
  if (AssignEvaluation(worker_id, me, now, out)) {
    *result = AcquireResult::kAssigned;
    return Status::Ok();
  }
  // The studies in id order, one lock at a time, and those busy (deciding or committing under
  // their lock) last: a worker waits for a busy study only when no other study has work.
  std::vector<std::shared_ptr<ServedStudy>> busy;
  std::optional<Status> assigned;
  for (const auto& study : studies_.All()) {
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
  for (const auto& study : studies_.All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    if (study->dropped) continue;
    MaybeFinishStudy(*study, now);
    all_finished &= !IsOpen(study->runner->state());
  }
  all_finished &= !EvaluationsOpen();  // after the loop: a study it ended may have queued one
  double idle_since = now;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    const Worker* found = workers_.Find(worker_id);
    const Worker& w = found ? *found : me;
    ledger_.OpenIdle(worker_id, w.last_study_id, now, w.record.price_per_hour, w.record.market);
    idle_since = ledger_.IdleOf(worker_id)->start;
  }
  *result = AcquireResult::kNoWork;
  if (options_.shutdown_when_idle && all_finished) {
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

std::optional<Status> Coordinator::AssignTrial(const std::shared_ptr<ServedStudy>& served,
                                               std::unique_lock<std::mutex>& lock,
                                               const std::string& worker_id, const Worker& w,
                                               double now, Assignment* out) {
  ServedStudy& study = *served;
  if (study.dropped) return std::nullopt;
  // Trials decided on a view holding a trial whose write failed are not stored: reread first.
  if (study.trial_write_failed) RereadStudy(study);
  StudyRunner* runner = study.runner.get();
  const int64_t study_id = study.id();
  std::string why_none;
  costs_.UpdateQuotaUse(*runner, now);
  auto next = runner->PickNext(now, StudyDollars(study_id, now), &why_none);
  if (!next) return std::nullopt;
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
  std::shared_future<void> committed = commit_->Submit(
      [this, served, t, seg, is_new = next->is_new] {
        if (is_new) {
          // Numbers follow one another: one stored after a number that failed would leave a gap
          // the study could not be restored across.
          if (served->trial_write_failed) {
            throw std::runtime_error("an earlier trial of study " + std::to_string(t.study_id) +
                                     " could not be stored");
          }
          store_->InsertTrial(t);
        } else {
          store_->UpdateTrialState(t.study_id, t.number, TrialState::kRunning, "", 0);
        }
        store_->OpenSegment(seg);
      },
      [served, is_new = next->is_new](std::exception_ptr error) {
        if (error && is_new) served->trial_write_failed = true;
      });
  if (next->is_new) runner->ApplyNewTrial(next->number, next->params);
  runner->ApplyState(next->number, TrialState::kRunning);
  {
    std::lock_guard<std::mutex> table(table_mu_);
    leases_.Grant(lease);
    ledger_.Open(seg);
    workers_.NoteStudy(worker_id, study_id);
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
  if (!options_.checkpoint_dir.empty() && options_.shared_checkpoints) {
    out->checkpoint_dir = checkpoints_.StudyDir(study_id);
  }
  out->resume_checkpoint = TrialCheckpoints::Resume(study, next->number);
  out->resume_fallbacks = checkpoints_.Older(study_id, next->number, out->resume_checkpoint);
  out->checkpoint_every_epochs = config.checkpoint.every_epochs;
  out->trial = config.trial;
  lock.unlock();
  if (Status stored = AwaitCommit(committed, "the new lease"); !stored.ok()) {
    lock.lock();
    if (!study.dropped) UndoAssignment(study, lease.id);
    return stored;
  }
  CloseIdle(worker_id, now, "leased");
  spdlog::info("[study {}] trial {} {} on {}: {}", study_id, next->number,
               next->is_new ? "starts" : "resumes at epoch " + std::to_string(next->start_epoch),
               worker_id, search::ToString(next->params));
  return Status::Ok();
}

void Coordinator::UndoAssignment(ServedStudy& study, const std::string& lease_id) {
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (leases_.Find(lease_id)) {
      ledger_.Close(lease_id, ledger_.Start(lease_id).value_or(0));  // no time, no dollars
      leases_.End(lease_id);
    }
  }
  RereadStudy(study);
}

void Coordinator::RereadStudy(ServedStudy& study) {
  // Writes queued after the failed one were decided on a view that held it; let them land (or
  // fail) first, so that the Store read below is final for everything memory applied. (The
  // study's lock is held: its own later writes are all queued already.)
  try {
    commit_->Run([] {});
  } catch (const std::exception&) {
  }
  const int64_t study_id = study.id();
  try {
    study.runner->RebuildFrom(store_->ListTrials(study_id),
                              [&](const std::function<void(const ReportRecord&)>& apply) {
                                store_->ForEachReport(study_id, apply);
                              });
    study.trial_write_failed = false;
  } catch (const std::exception& e) {
    spdlog::error("[study {}] could not reread its history after a failed write: {}", study_id,
                  e.what());
  }
}

void Coordinator::CloseIdle(const std::string& worker_id, double end, const char* reason) {
  std::optional<IdleSegmentRecord> idle;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    idle = ledger_.CloseIdle(worker_id, end, reason);
  }
  if (!idle) return;
  try {
    store_->InsertIdleSegment(*idle);
  } catch (const std::exception& e) {
    StorageError(e, "an idle stretch");  // logged; the ledger of trials is unaffected
  }
}

}  // namespace sift::coordinator

#include "coordinator/core/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "common/checkpoint_names.h"
#include "common/hparams/hparams.h"
#include "common/metric_json.h"
#include "common/metric_names.h"
#include "coordinator/core/checkpoint_retention.h"
#include "coordinator/core/checkpoint_store.h"
#include "coordinator/core/random_id.h"
#include "coordinator/core/stored_study.h"
#include "coordinator/core/study_control.h"
#include "search/rng.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Why a report ends its trial as DIVERGED ("val_loss NaN at epoch 2"), or "" when it does not:
// a non-finite objective always does, a non-finite training loss under stop_on_divergence.
std::string DivergenceReason(const StudyConfig& config, int64_t epoch,
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

// The decision a stored report answered with.
search::Decision DecisionOf(const ReportRecord& r) {
  search::Decision d;
  d.action = r.decision == "STOP"    ? search::Action::kStop
             : r.decision == "PAUSE" ? search::Action::kPause
                                     : search::Action::kContinue;
  d.reason = r.reason;
  return d;
}

}  // namespace

std::string CreatedFromDir(const std::vector<StudyEventRecord>& events) {
  for (const auto& e : events) {
    if (e.action == "created" && std::filesystem::path(e.detail).is_absolute()) {
      return ConfigDir(e.detail);
    }
  }
  return "";
}

namespace {

// A worker silent past the lease timeout is lost: its leases have expired and its idle stretch
// is closed. Past kMaxLostWorkers of them the longest silent are forgotten, so that memory is
// bounded by the workers alive, not by every registration ever (a crash-looping or hostile
// client registers again and again; they were all reloaded at each start too). A forgotten
// worker stays in the database; if it comes back, AcquireTrial answers NOT_FOUND and it
// registers anew, as sift-worker does. (A template: the maps' element types are private.)
constexpr size_t kMaxLostWorkers = 1000;

template <typename Workers>
void ForgetLostWorkers(Workers& workers, const std::set<std::string>& holding,
                       const Ledger& ledger, double now, double timeout_s) {
  std::vector<std::pair<double, std::string>> lost;  // (last seen, id)
  for (const auto& [id, w] : workers) {
    if (now - w.last_seen > timeout_s && !ledger.IdleOf(id) && !holding.count(id)) {
      lost.emplace_back(w.last_seen, id);
    }
  }
  if (lost.size() <= kMaxLostWorkers) return;
  const size_t forget = lost.size() - kMaxLostWorkers;
  std::partial_sort(lost.begin(), lost.begin() + static_cast<std::ptrdiff_t>(forget), lost.end());
  for (size_t i = 0; i < forget; ++i) workers.erase(lost[i].second);
  spdlog::info("forgot {} workers silent for more than {:.0f} s (kept the {} heard from last)",
               forget, timeout_s, kMaxLostWorkers);
}

}  // namespace

Coordinator::Coordinator(std::unique_ptr<Store> store, CoordinatorOptions options)
    : store_(std::make_unique<FencedStore>(std::move(store))),
      commit_(std::make_unique<GroupCommit>(*store_)),
      after_commit_(std::make_unique<TaskThread>("sift-committed")),
      options_(std::move(options)),
      studies_(*store_, options_.max_running_studies, options_.study_lease_s, options_.owner) {
  if (!options_.clock) options_.clock = SystemNow;
  const double now = Now();
  for (const auto& w : store_->ListWorkers()) {
    workers_[w.id] = Worker{w, now, 0, {}};
  }
  for (const auto& s : store_->ListStudies()) {
    // With study leases, an open study another coordinator serves is left to it.
    if (IsOpen(s.state) && !studies_.Claim(s.id, now)) continue;
    RestoreStudy(s, now);
  }
}

void Coordinator::RestoreStudy(const StudyRecord& s, double now) {
  const auto events = store_->ListStudyEvents(s.id);
  StudyConfig config;
  if (std::string problem = ParseStoredConfig(s, events, &config); !problem.empty()) {
    spdlog::error("study {} ({}) cannot be restored: {}", s.id, s.name, problem);
    return;
  }
  const Tags tags = config.tags;
  // Served from now on, and filled under its lock: a call that finds it (a worker of a study
  // taken over reporting on a lease restored below) waits until it is whole.
  auto study = std::make_shared<ServedStudy>(
      std::make_unique<StudyRunner>(s.id, std::move(config), s.created_at));
  std::lock_guard<std::mutex> lock(study->mu);
  studies_.Add(study);
  StudyRunner* runner = study->runner.get();
  auto trials = store_->ListTrials(s.id);
  auto segments = store_->ListSegments(s.id);
  // Each trial resumes from its newest checkpoint (ResumePoints). What the open leases need
  // from their reports is gathered as the reports stream past.
  struct LeaseReports {
    double checkpoint_at = 0;
    std::string last_decision;  // in the Store's order
    int64_t newest_seq = -1;
    search::Decision newest;
  };
  std::map<std::string, LeaseReports> by_lease;  // the open ones: a few, of 100,000 ended
  for (const auto& seg : segments) {
    if (!seg.end) by_lease[seg.lease_id];
  }
  ResumePoints resume;
  RestoreRunner(s, trials, [&](const std::function<void(const ReportRecord&)>& apply) {
    store_->ForEachReport(s.id, [&](const ReportRecord& r) {
      apply(r);
      auto open = by_lease.find(r.lease_id);
      if (open != by_lease.end()) {
        LeaseReports& lease = open->second;
        lease.last_decision = r.decision;
        if (r.seq > lease.newest_seq) {
          lease.newest_seq = r.seq;
          lease.newest = DecisionOf(r);
        }
        if (!r.checkpoint.empty()) lease.checkpoint_at = std::max(lease.checkpoint_at, r.created_at);
      }
      resume.NoteReport(r);
    });
  }, events, runner);
  std::map<int64_t, TrialCost> costs;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    costs = ledger_.RestoreStudy(s.id, segments, now);
    tags_[s.id] = tags;
  }
  for (const auto& [number, cost] : costs) {
    if (number >= 0 && number < static_cast<int64_t>(trials.size())) {
      runner->ApplyCost(number, cost.dollars, cost.seconds);
    }
  }
  study->cost_events = RecordedCostKeys(events);
  size_t open_leases = 0;
  for (const auto& seg : segments) {
    if (seg.end) {
      resume.NoteClosedSegment(seg);
      continue;
    }
    // A lease held when the coordinator stopped: its worker gets one lease timeout to resume
    // heartbeats and reports before the trial is requeued.
    TrialLease lease{seg.lease_id, seg.worker_id, s.id, seg.number, now};
    // A running trial told PAUSE was told so by a study pause (a rung pause parks it).
    const LeaseReports& reported = by_lease[seg.lease_id];
    lease.study_paused = reported.last_decision == "PAUSE" &&
                         seg.number < static_cast<int64_t>(runner->view().trials.size()) &&
                         runner->view().trials[seg.number].state == TrialState::kRunning;
    if (reported.newest_seq >= 0) {
      lease.has_report = true;
      lease.last_seq = reported.newest_seq;
      lease.last_decision = reported.newest;
    }
    std::lock_guard<std::mutex> table(table_mu_);
    ledger_.NoteCheckpoint(seg.lease_id, std::max(seg.start, reported.checkpoint_at));
    leases_.Grant(lease);
    ++open_leases;
  }
  study->resume = resume.points();
  spdlog::info("restored study {} '{}' ({}): {} trials, {} open leases", s.id, s.name,
               ToString(s.state), trials.size(), open_leases);
  RestoreEvaluations(*study);
  PruneCheckpoints(*study);
}

Coordinator::~Coordinator() {
  // The reports still queued are committed and answered (in order: the drain last), and what
  // their answers do under a study's lock runs while everything it touches is here.
  try {
    commit_->Drain();
  } catch (const std::exception&) {
  }
  after_commit_.reset();
}

Status Coordinator::StorageError(const std::exception& e, const std::string& what) {
  const std::string msg = e.what();
  if (dynamic_cast<const StudyFenced*>(&e) != nullptr) {
    // The database refused it: another coordinator serves the study now. NOT_FOUND, as for
    // any study not served here, so the worker gives the trial up and looks elsewhere.
    spdlog::warn("fenced while recording {}: {}", what, msg);
    return Status::Error(Status::Code::kNotFound,
                         "could not record " + what + ": " + msg +
                             "; this coordinator no longer serves the study");
  }
  spdlog::error("storage error while {}: {}", what, msg);
  // UNAVAILABLE, whatever the cause (disk full, file-size limit, read-only file): the failed
  // transaction was rolled back, and the same call succeeds once the disk does, so clients retry.
  return Status::Error(Status::Code::kUnavailable, "could not record " + what +
                                                       ": database write failed (" + msg +
                                                       "); nothing was changed, retry later");
}

Status Coordinator::AwaitCommit(const std::shared_future<void>& committed,
                                const std::string& what) {
  try {
    committed.get();
  } catch (const std::exception& e) {
    return StorageError(e, what);
  }
  return Status::Ok();
}

Status Coordinator::CreateStudy(const std::string& config_text, const std::string& origin,
                                int64_t* id, std::vector<std::string>* errors,
                                const std::string& user) {
  const ConfigLimits& limits = options_.config_limits;
  if (config_text.size() > limits.max_bytes) {
    return Status::Error(Status::Code::kResourceExhausted,
                         origin + ": " + std::to_string(config_text.size()) +
                             " bytes, over the limit of " + std::to_string(limits.max_bytes) +
                             " (--max-config-bytes)");
  }
  // Checked before parsing too, so a client over the cap cannot keep the parser busy.
  if (Status s = studies_.RunningCap(); !s.ok()) return s;
  StudyConfig config;
  // `origin` is the config file's absolute path when the client knows it (sift submit, sift run):
  // relative data paths are taken from its folder.
  const bool from_file = std::filesystem::path(origin).is_absolute();
  *errors = ParseStudyConfig(config_text, origin, &config, limits, from_file ? ConfigDir(origin) : "");
  if (!errors->empty()) {
    std::string msg = "invalid study config:";
    for (const auto& e : *errors) msg += "\n  " + e;
    return Status::Error(Status::Code::kInvalidArgument, msg);
  }
  // One creation at a time, so that two cannot both pass the cap. It is taken before any other
  // lock (RunningCap takes the study locks in turn).
  std::lock_guard<std::mutex> creating(create_mu_);
  if (Status s = studies_.RunningCap(); !s.ok()) return s;
  const double now = Now();
  if (Status s = CheckQuotas(config.tags, now); !s.ok()) return s;
  StudyRecord record;
  record.name = config.name;
  record.config_text = config_text;
  record.created_at = now;
  try {
    commit_->Run([&] {
      *id = store_->CreateStudy(record);
      store_->InsertStudyEvent({*id, now, user.empty() ? "unknown" : user, "created", origin});
      if (!studies_.Claim(*id, now)) throw std::runtime_error("its lease is taken");
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the study");
  }
  spdlog::info("study {} '{}' created: searcher {}, scheduler {}, {} trials x {} epochs", *id,
               config.name, config.searcher.type, config.scheduler.type,
               config.budget.max_trials, config.budget.max_epochs);
  {
    std::lock_guard<std::mutex> table(table_mu_);
    tags_[*id] = config.tags;
  }
  studies_.Add(std::make_shared<ServedStudy>(
      std::make_unique<StudyRunner>(*id, std::move(config), now)));
  return Status::Ok();
}

Status Coordinator::GetStudy(int64_t id, StudySummary* out) {
  LockedStudy study = LockStudy(id);
  if (!study) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  const StudyRunner& runner = *study->runner;
  const double now = Now();
  const auto record = store_->GetStudy(id);
  const auto segments = store_->ListSegments(id);
  *out = SummarizeStudy(record ? *record : StudyRecord{}, runner, store_->ListStudyEvents(id),
                        segments, store_->ListIdleSegments(id), StudyDollars(id, now), now);
  if (IsOpen(runner.state())) {
    if (Forecast f = ForecastOf(runner, store_->ListTrials(id), segments, now); f.possible) {
      out->forecast = f;
    }
  }
  if (!options_.checkpoint_dir.empty()) out->checkpoint_dir = StudyCheckpointDir(id);
  // Idle stretches still open, to now or the worker's last sign of life.
  std::lock_guard<std::mutex> table(table_mu_);
  ledger_.OpenIdleOf(
      id,
      [&](const std::string& worker_id) {
        const Worker& w = workers_.at(worker_id);
        return now - w.last_seen <= options_.lease_timeout_s ? now : w.last_seen;
      },
      &out->idle_seconds, &out->idle_dollars);
  return Status::Ok();
}

std::vector<StudySummary> Coordinator::ListStudies() {
  std::vector<StudySummary> out;
  for (const auto& study : studies_.All()) {
    StudySummary s;
    if (GetStudy(study->id(), &s).ok()) out.push_back(std::move(s));
  }
  return out;
}

TrialExtras Coordinator::TrialExtrasOf(const ServedStudy& study) {
  TrialExtras extras;
  extras.checkpoint = [&study](int64_t number) { return ResumeCheckpoint(study, number); };
  extras.evaluation = [&study](int64_t number) -> std::optional<EvaluationRecord> {
    auto it = study.evaluations.find(number);
    if (it == study.evaluations.end()) return std::nullopt;
    return it->second;
  };
  return extras;
}

Status Coordinator::ListTrials(int64_t study_id, std::vector<TrialSummary>* out) {
  LockedStudy study = LockStudy(study_id);
  if (!study) {
    return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(study_id));
  }
  const double now = Now();
  *out = SummarizeTrials(*study->runner, store_->ListTrials(study_id),
                         store_->ListReports(study_id), store_->ListSegments(study_id), now,
                         TrialExtrasOf(*study));
  return Status::Ok();
}

Status Coordinator::CancelStudy(int64_t id, const std::string& user, const std::string& detail) {
  LockedStudy study = LockStudy(id);
  if (!study) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  StudyRunner* runner = study->runner.get();
  if (!IsOpen(runner->state())) return Status::Ok();
  const double now = Now();
  try {
    commit_->Run([&] {
      store_->UpdateStudy(id, StudyState::kCancelled, "cancelled by user", now);
      store_->InsertStudyEvent({id, now, user.empty() ? "unknown" : user, "cancelled", detail});
      for (const auto& t : runner->view().trials) {
        if (t.state == TrialState::kPending || t.state == TrialState::kPaused) {
          store_->UpdateTrialState(id, t.number, TrialState::kStopped, "study cancelled", now);
        }
      }
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the cancellation");
  }
  for (const auto& t : runner->view().trials) {
    if (t.state == TrialState::kPending || t.state == TrialState::kPaused) {
      runner->ApplyState(t.number, TrialState::kStopped);
    }
  }
  runner->ApplyStudyState(StudyState::kCancelled, "cancelled by user");
  spdlog::info("study {} cancelled; running trials stop at their next report", id);
  return Status::Ok();
}

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
    workers_[request.id] = Worker{request, now, 0, {}};
  }
  spdlog::info("worker {} registered: {} {} {} at ${:.4f}/h, {} threads", request.id,
               request.name, request.instance_type, request.market, request.price_per_hour,
               request.threads);
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
    if (Status s = TouchWorker(worker_id, now, &w); !s.ok()) return s;
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
    auto it = workers_.find(worker_id);
    const Worker& w = it != workers_.end() ? it->second : me;
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
  UpdateQuotaUse(*runner, now);
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
    if (auto it = workers_.find(worker_id); it != workers_.end()) {
      it->second.last_study_id = study_id;
    }
  }
  const StudyConfig& config = runner->config();
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
    out->checkpoint_dir = StudyCheckpointDir(study_id);
  }
  out->resume_checkpoint = ResumeCheckpoint(study, next->number);
  out->resume_fallbacks = OlderCheckpoints(study_id, next->number, out->resume_checkpoint);
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

Status Coordinator::TouchWorker(const std::string& worker_id, double now, Worker** out) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    return Status::Error(Status::Code::kNotFound,
                         "unknown worker '" + worker_id + "': register first");
  }
  it->second.last_seen = now;
  *out = &it->second;
  return Status::Ok();
}

Status Coordinator::CheckLease(const ServedStudy* study, const std::string& worker_id,
                               const std::string& lease_id, TrialLease** out,
                               bool completing_ok) {
  std::lock_guard<std::mutex> table(table_mu_);
  Worker* w = nullptr;
  if (Status s = TouchWorker(worker_id, Now(), &w); !s.ok()) return s;
  if (Status s = leases_.Held(worker_id, lease_id, out); !s.ok()) return s;
  if (!study || (*out)->study_id != study->id()) {  // granted since the caller looked
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + lease_id + "' is not held (expired, ended or never granted)");
  }
  if ((*out)->completing.valid() && !completing_ok) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + lease_id + "' is being completed");
  }
  return Status::Ok();
}

Coordinator::LockedStudy Coordinator::LockStudy(int64_t study_id) {
  LockedStudy locked;
  auto study = studies_.Find(study_id);
  if (!study) return locked;
  locked.lock = std::unique_lock<std::mutex>(study->mu);
  if (study->dropped) {
    locked.lock.unlock();
    return locked;
  }
  locked.study = std::move(study);
  return locked;
}

std::unique_lock<std::mutex> Coordinator::LockStudyForTest(int64_t study_id) {
  LockedStudy locked = LockStudy(study_id);
  return std::move(locked.lock);
}

int64_t Coordinator::StudyOfLease(const std::string& lease_id) {
  std::lock_guard<std::mutex> table(table_mu_);
  if (const TrialLease* lease = leases_.Find(lease_id)) return lease->study_id;
  if (const EvaluationLease* lease = leases_.FindEvaluation(lease_id)) return lease->study_id;
  return 0;
}

double Coordinator::StudyDollars(int64_t study_id, double now) {
  std::lock_guard<std::mutex> table(table_mu_);
  return ledger_.StudyDollars(study_id, now);
}

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
  bool known = false, retried = false;
  search::Decision first;
  std::shared_future<void> done;
  if (study) {
    std::lock_guard<std::mutex> table(table_mu_);
    const TrialLease* held = leases_.Find(lease_id);
    known = held && held->study_id == study->id() && held->worker_id == worker_id &&
            held->reports_known && (!held->has_report || seq >= held->last_seq);
    retried = known && held->has_report && seq == held->last_seq;
    if (retried) {
      first = held->last_decision;
      done = held->last_commit;
    }
  }
  if (retried) {
    lock.unlock();
    auto reply = [this, first, done, answer = std::move(answer)] {
      answer(done.valid() ? AwaitCommit(done, "the report") : Status::Ok(), first);
    };
    if (!done.valid() || done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      reply();
    } else {  // writes are answered in order: this empty one right after the first report's
      commit_->Submit([] {}, [reply = std::move(reply)](std::exception_ptr) { reply(); });
    }
    return;
  }
  if (!known) {
    try {
      if (auto prior = store_->FindReport(lease_id, seq)) {
        *decision = DecisionOf(*prior);
        return answer_now(Status::Ok());
      }
    } catch (const std::exception& e) {
      return answer_now(StorageError(e, "the report lookup"));
    }
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) {
    return answer_now(s);
  }
  StudyRunner* runner = study->runner.get();
  const auto& trial = runner->view().trials.at(lease->number);
  const std::string& metric = runner->config().objective.metric;
  auto m = metrics.find(metric);
  if (m == metrics.end()) {
    return answer_now(Status::Error(Status::Code::kInvalidArgument,
                                    "report for trial " + std::to_string(lease->number) +
                                        " lacks the objective metric '" + metric + "'"));
  }
  if (trial.state != TrialState::kRunning) {
    return answer_now(Status::Error(Status::Code::kFailedPrecondition,
                                    "trial " + std::to_string(lease->number) + " is " +
                                        search::ToString(trial.state) + ", not running"));
  }
  if (Status s = CheckCheckpointName(checkpoint, lease->number); !s.ok()) return answer_now(s);
  if (epoch != trial.LastResource() + 1 || epoch > runner->config().budget.max_epochs) {
    return answer_now(Status::Error(Status::Code::kInvalidArgument,
                                    "trial " + std::to_string(lease->number) + ": epoch " +
                                        std::to_string(epoch) + " reported, expected " +
                                        std::to_string(trial.LastResource() + 1)));
  }
  const double now = Now();
  double spent = 0;  // the study's dollars now, for its budget (one table lock for both)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    lease->last_seen = now;
    spent = ledger_.StudyDollars(lease->study_id, now);
  }
  // A non-finite objective (or training loss, under stop_on_divergence) ends the trial as
  // DIVERGED: the scheduler never sees the value, and the trial is not retried.
  const std::string diverged = DivergenceReason(runner->config(), epoch, metrics);
  UpdateQuotaUse(*runner, now);
  *decision = !diverged.empty() ? search::Decision::Stop(diverged)
                                : runner->Decide(lease->number, epoch, m->second, now, spent);
  // A paused study's trial hands back at this epoch: PAUSE makes its worker checkpoint and
  // release the lease; the trial stays RUNNING until then and is requeued by CompleteTrial.
  bool paused_by_it = false;
  if (runner->state() == StudyState::kPaused && decision->action == search::Action::kContinue &&
      epoch < runner->config().budget.max_epochs) {
    *decision = search::Decision::Pause("study paused");
    paused_by_it = !lease->study_paused;
    lease->study_paused = true;
  }
  auto report = std::make_shared<ReportRecord>();
  ReportRecord& r = *report;
  r.study_id = lease->study_id;
  r.number = lease->number;
  r.epoch = epoch;
  r.metrics = metrics;
  r.lease_id = lease_id;
  r.seq = seq;
  r.decision = search::ToString(decision->action);
  r.reason = decision->reason;
  r.created_at = now;
  r.checkpoint = checkpoint;
  const TrialState next_state =
      !diverged.empty()                                                  ? TrialState::kDiverged
      : decision->action == search::Action::kStop                          ? TrialState::kStopped
      : decision->action == search::Action::kPause && !lease->study_paused ? TrialState::kPaused
                                                                           : trial.state;
  // The worker checkpointed this epoch before reporting it: that is now the trial's newest.
  const std::string previous = checkpoint.empty() ? "" : ResumeCheckpoint(*study, r.number);
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
      if (!served->dropped) PruneCheckpoints(*served, {previous});
    }
    // At most about one info line a second per study (progress_log.h); the rest at debug,
    // formatted only when shown.
    int64_t unshown = 0;
    const auto level =
        progress_.TakeInfo(r.study_id, &unshown) ? spdlog::level::info : spdlog::level::debug;
    if (spdlog::should_log(level)) {
      std::string shown;
      for (const auto& [k, v] : r.metrics) {
        if (k == metric || k == common::kTrainLoss) shown += fmt::format(" {}={:.4f}", k, v);
      }
      spdlog::log(
          level, "[study {}] trial {} epoch {}/{}:{} -> {}{}{}", r.study_id, r.number, r.epoch,
          max_epochs, shown, r.decision, r.reason.empty() ? "" : " (" + r.reason + ")",
          unshown == 0 ? "" : fmt::format(" [{} more reports since the last line]", unshown));
    }
    if (!diverged.empty()) {
      spdlog::warn("[study {}] trial {} DIVERGED: {}", r.study_id, r.number, diverged);
    }
    answer(Status::Ok(), decided);
  };
  // Group commit: the write joins the batch the writer commits next. Memory takes the report
  // now, in its study lock's order (the order of its writes), so the next report decides on
  // it; the worker hears the decision only once it committed, and UndoReport takes it back if
  // it did not.
  const bool state_changes = next_state != trial.state;
  const double ended_at = search::IsTerminal(next_state) ? now : 0;
  done = commit_->Submit(
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
  lease->has_report = true;
  lease->last_seq = seq;
  lease->last_decision = *decision;
  lease->last_commit = done;
  // The view holds finite values only; a restart replays the same (StudyRunner::Restore).
  if (std::isfinite(m->second)) runner->ApplyReport(r.number, epoch, m->second);
  runner->ApplyState(r.number, next_state);
  if (!checkpoint.empty()) {
    {
      std::lock_guard<std::mutex> table(table_mu_);
      ledger_.NoteCheckpoint(lease_id, now);
    }
    study->resume[r.number] = checkpoint;
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

void Coordinator::ApplyLeaseEnd(ServedStudy& study, const std::string& lease_id, double end) {
  std::optional<Ledger::Charge> charge;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (!leases_.Find(lease_id)) return;
    charge = ledger_.Close(lease_id, end);
    leases_.End(lease_id);
  }
  if (charge && charge->study_id == study.id()) {
    study.runner->ApplyCost(charge->number, charge->dollars, charge->seconds);
  }
}

Status Coordinator::CompleteTrial(const std::string& worker_id, const std::string& lease_id,
                                  const std::map<std::string, double>& final_metrics,
                                  const std::string& checkpoint) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  if (auto s = EndEvaluationLease(study.study.get(), worker_id, lease_id, EvaluationState::kDone,
                                  final_metrics, "")) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease, true); !s.ok()) {
    return s;
  }
  if (lease->completing.valid()) {  // a retry: the first one's answer
    const std::shared_future<void> first = lease->completing;
    study.lock.unlock();
    return AwaitCommit(first, "the completion");
  }
  if (Status s = CheckCheckpointName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = study->runner.get();
  const auto& trial = runner->view().trials.at(lease->number);
  const double now = Now();
  // A running trial that ends here trained to its last epoch; stopped or paused ones were
  // decided at their last report and keep that state and reason.
  const bool requeue = lease->study_paused && trial.state == TrialState::kRunning;
  if (requeue) {
    const std::string lease_copy = lease_id;
    return EndLeaseAndRequeue(*study, lease_copy, now, kStudyPausedSegment, checkpoint, 0.0);
  }
  const bool completes = trial.state == TrialState::kRunning;
  const std::string reason =
      "completed " + std::to_string(trial.LastResource()) + " epochs";
  const bool paused = trial.state == TrialState::kPaused;
  const char* segment_reason = completes                                ? "completed"
                               : paused                                 ? "paused"
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
      commit_->Submit([this, study_id, number, completes, reason, final_metrics, lease_id, now,
                       segment_reason, kept] {
        if (completes) {
          store_->UpdateTrialState(study_id, number, TrialState::kCompleted, reason, now);
        }
        if (!final_metrics.empty()) store_->SetFinalMetrics(study_id, number, final_metrics);
        store_->CloseSegment(study_id, lease_id, now, segment_reason, kept, 0.0);
      });
  {
    std::lock_guard<std::mutex> table(table_mu_);  // written under both locks, read under either
    lease->completing = committed;
  }
  study.lock.unlock();
  const Status stored = AwaitCommit(committed, "the completion");
  study.lock.lock();
  if (!study->dropped) {  // no other call ends a lease that is being completed
    std::lock_guard<std::mutex> table(table_mu_);
    if (TrialLease* held = leases_.Find(lease_id)) held->completing = {};
  }
  if (!stored.ok()) return stored;
  if (study->dropped) return Status::Ok();  // stored; another coordinator serves it now
  if (completes) runner->ApplyState(number, TrialState::kCompleted);
  if (!kept.empty()) study->resume[number] = kept;
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::info("[study {}] trial {} {}", study_id, number,
               completes ? reason : std::string("released (") + segment_reason + ")");
  MaybeFinishStudy(*study, now);
  PruneCheckpoints(*study);
  return Status::Ok();
}

Status Coordinator::FailTrial(const std::string& worker_id, const std::string& lease_id,
                              const std::string& error, bool worker_cannot_run) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  if (auto s = EndEvaluationLease(study.study.get(), worker_id, lease_id, EvaluationState::kFailed,
                                  {}, error, worker_cannot_run)) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  StudyRunner* runner = study->runner.get();
  const double now = Now();
  if (worker_cannot_run) {
    // Not the trial's fault: requeue it for a worker that can, and offer this one no more.
    std::string name;
    {
      std::lock_guard<std::mutex> table(table_mu_);
      name = workers_.at(worker_id).record.name;
    }
    const std::string why = "requeued: worker " + name + " cannot run it: " + error;
    try {
      commit_->Run([&] {
        store_->CloseSegment(lease->study_id, lease_id, now, "refused");
        store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why, 0);
      });
    } catch (const std::exception& e) {
      return StorageError(e, "the refusal");
    }
    const int64_t study_id = lease->study_id, number = lease->number;
    runner->ApplyState(number, TrialState::kPending);
    ApplyLeaseEnd(*study, lease_id, now);
    {
      std::lock_guard<std::mutex> table(table_mu_);
      if (auto it = workers_.find(worker_id); it != workers_.end()) {
        it->second.cannot_run.insert(study_id);
      }
    }
    spdlog::warn("[study {}] trial {} {}; that worker gets none of the study's trials", study_id,
                 number, why);
    MaybeFailUnrunnable(*study, error, now);
    return Status::Ok();
  }
  const std::string reason = "failed: " + error;
  try {
    commit_->Run([&] {
      store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kFailed, reason, now);
      store_->CloseSegment(lease->study_id, lease_id, now, "failed");
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the failure");
  }
  const int64_t study_id = lease->study_id;
  const int64_t number = lease->number;
  runner->ApplyState(number, TrialState::kFailed);
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::warn("[study {}] trial {} {}", study_id, number, reason);
  MaybeFinishStudy(*study, now);
  PruneCheckpoints(*study);
  return Status::Ok();
}

Status Coordinator::Heartbeat(const std::string& worker_id,
                              const std::vector<std::string>& lease_ids,
                              std::vector<std::string>* revoked) {
  std::lock_guard<std::mutex> table(table_mu_);
  const double now = Now();
  Worker* w = nullptr;
  if (Status s = TouchWorker(worker_id, now, &w); !s.ok()) return s;
  for (auto& id : leases_.Heartbeat(worker_id, lease_ids, now)) revoked->push_back(std::move(id));
  return Status::Ok();
}

Status Coordinator::PreemptTrial(const std::string& worker_id, const std::string& lease_id,
                                 const std::string& checkpoint, const std::string& reason) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  if (auto s = EndEvaluationLease(study.study.get(), worker_id, lease_id,
                                  EvaluationState::kPending, {}, "preempted (" + reason + ")")) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  if (Status s = CheckCheckpointName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = study->runner.get();
  const double now = Now();
  double wasted = 0.0;
  if (checkpoint.empty()) {
    std::lock_guard<std::mutex> table(table_mu_);
    wasted = ledger_.LostSecondsAt(lease_id, now);
  }
  // Its worker stopped because the study was paused (Ctrl-C on `sift run`): not a preemption.
  if (runner->state() == StudyState::kPaused) {
    return EndLeaseAndRequeue(*study, lease_id, now, kStudyPausedSegment, checkpoint, wasted);
  }
  const bool requeue = runner->view().trials.at(lease->number).state == TrialState::kRunning;
  const std::string why = "requeued: preempted (" + reason + ")";
  try {
    commit_->Run([&] {
      store_->CloseSegment(lease->study_id, lease_id, now, "preempted", checkpoint, wasted);
      if (requeue) {
        store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why, 0);
      }
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the preemption");
  }
  const int64_t study_id = lease->study_id, number = lease->number;
  if (requeue) runner->ApplyState(number, TrialState::kPending);
  if (!checkpoint.empty()) study->resume[number] = checkpoint;
  ApplyLeaseEnd(*study, lease_id, now);
  spdlog::warn("[study {}] trial {}: worker {} preempted ({}); {}{}", study_id, number, worker_id,
               reason, requeue ? "requeued" : "released",
               checkpoint.empty() ? "" : ", resumes from " + checkpoint);
  PruneCheckpoints(*study);
  return Status::Ok();
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

void Coordinator::Tick() {
  const double now = Now();
  RenewStudyLeases(now);
  std::vector<std::pair<std::string, int64_t>> expired;  // (lease, its study)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    for (const auto& id : leases_.Expired(now, options_.lease_timeout_s)) {
      expired.emplace_back(id, leases_.Find(id)->study_id);
    }
  }
  // One study's lock at a time; each lease is looked at again under it (a heartbeat or its end
  // may have come since).
  for (const auto& [id, study_id] : expired) {
    LockedStudy study = LockStudy(study_id);
    if (!study) continue;  // not served here any more: its leases went with it
    TrialLease lease;
    double end = 0, wasted = 0;
    {
      std::lock_guard<std::mutex> table(table_mu_);
      const TrialLease* held = leases_.Find(id);
      if (!held || now - held->last_seen <= options_.lease_timeout_s) continue;
      if (held->completing.valid()) continue;  // ends as its completion commits
      lease = *held;
      // A lost VM is billed to its last sign of life; the work since its last checkpoint is lost.
      end = std::max(ledger_.Start(id).value_or(lease.last_seen), lease.last_seen);
      wasted = ledger_.LostSecondsAt(id, end);
    }
    StudyRunner* runner = study->runner.get();
    const bool requeue = runner->view().trials.at(lease.number).state == TrialState::kRunning;
    try {
      commit_->Run([&] {
        store_->CloseSegment(lease.study_id, id, end, "expired", "", wasted);
        if (requeue) {
          store_->UpdateTrialState(lease.study_id, lease.number, TrialState::kPending,
                                   "requeued: lease expired", 0);
        }
      });
    } catch (const std::exception& e) {
      StorageError(e, "a lease expiry");
      continue;
    }
    if (requeue) runner->ApplyState(lease.number, TrialState::kPending);
    ApplyLeaseEnd(*study, id, end);
    PruneCheckpoints(*study);
    spdlog::warn("[study {}] trial {}: lease {} of worker {} expired (no heartbeat for {:.0f} s){}",
                 lease.study_id, lease.number, id, lease.worker_id, now - lease.last_seen,
                 requeue ? "; requeued" : "");
  }
  ExpireEvaluationLeases(now);
  for (const auto& study : studies_.All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    if (study->dropped) continue;
    if (IsOpen(study->runner->state())) WatchCosts(*study, now);
    MaybeFinishStudy(*study, now);
  }
  std::vector<std::pair<std::string, double>> lost;  // workers idle and silent: (id, end)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    for (const auto& [id, w] : workers_) {
      const Ledger::Idle* idle = ledger_.IdleOf(id);
      if (idle && now - w.last_seen > options_.lease_timeout_s) {
        lost.emplace_back(id, std::max(idle->start, w.last_seen));
      }
    }
  }
  for (const auto& [id, end] : lost) CloseIdle(id, end, "lost");
  std::lock_guard<std::mutex> table(table_mu_);
  ForgetLostWorkers(workers_, leases_.Holders(), ledger_, now, options_.lease_timeout_s);
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

void Coordinator::MaybeFailUnrunnable(ServedStudy& study, const std::string& why, double now) {
  StudyRunner& runner = *study.runner;
  if (!options_.fail_unrunnable_studies || runner.state() != StudyState::kRunning) return;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (leases_.AnyOf(runner.id())) return;  // some worker is running one of its trials
    for (const auto& [id, w] : workers_) {
      const bool live = now - w.last_seen <= options_.lease_timeout_s;
      if (live && !w.cannot_run.count(runner.id())) return;
    }
  }
  EndStudy(study, StudyState::kFailed, "no worker can run its trials: " + why, now);
}

void Coordinator::MaybeFinishStudy(ServedStudy& study, double now) {
  StudyRunner& runner = *study.runner;
  if (runner.state() != StudyState::kRunning) return;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (leases_.AnyOf(runner.id())) return;  // a worker still owes a completion
  }
  std::string reason;
  UpdateQuotaUse(runner, now);
  const double spent = StudyDollars(runner.id(), now);
  if (!runner.Finished(now, spent, &reason)) return;
  FireBudgetAlerts(study, spent, now);
  const auto& trials = runner.view().trials;
  const bool all_failed =
      !trials.empty() && std::all_of(trials.begin(), trials.end(), [](const auto& t) {
        return t.state == TrialState::kFailed;
      });
  if (!all_failed) return EndStudy(study, StudyState::kCompleted, reason, now);
  std::string first;
  try {
    const auto records = store_->ListTrials(runner.id());
    if (!records.empty()) first = "; trial 0 " + records.front().end_reason;
  } catch (const std::exception&) {
  }
  EndStudy(study, StudyState::kFailed,
           "every trial failed (" + std::to_string(trials.size()) + " of " +
               std::to_string(trials.size()) + ")" + first,
           now);
}

void Coordinator::EndStudy(ServedStudy& study, StudyState state, const std::string& reason,
                           double now) {
  StudyRunner& runner = *study.runner;
  // Paused trials were never promoted; pending ones (a study no worker could run) never ran.
  std::map<int64_t, std::string> parked;
  for (const auto& t : runner.view().trials) {
    if (t.state == TrialState::kPaused) parked[t.number] = "paused at a rung and never promoted";
    if (t.state == TrialState::kPending) {
      parked[t.number] = t.values.empty() ? "never run: " + reason
                                          : fmt::format("not resumed after epoch {}: {}",
                                                        t.LastResource(), reason);
    }
  }
  try {
    commit_->Run([&] {
      for (const auto& [n, why] : parked) {
        store_->UpdateTrialState(runner.id(), n, TrialState::kStopped, why, now);
      }
      store_->UpdateStudy(runner.id(), state, reason, now);
    });
  } catch (const std::exception& e) {
    StorageError(e, "the study's end");
    return;
  }
  for (const auto& [n, why] : parked) runner.ApplyState(n, TrialState::kStopped);
  runner.ApplyStudyState(state, reason);
  PruneCheckpoints(study);
  if (state == StudyState::kCompleted) QueueBestEvaluation(study, now);
  auto log = state == StudyState::kFailed ? spdlog::level::err : spdlog::level::info;
  spdlog::log(log, "[study {}] {}: {}; ${:.4f} spent", runner.id(),
              state == StudyState::kFailed ? "FAILED" : "finished", reason,
              StudyDollars(runner.id(), now));
}

bool Coordinator::AllStudiesFinished() {
  for (const auto& study : studies_.All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    // A paused study can still be resumed.
    if (!study->dropped && IsOpen(study->runner->state())) return false;
  }
  return !EvaluationsOpen();  // a finished study's best trial is still being scored
}

}  // namespace sift::coordinator

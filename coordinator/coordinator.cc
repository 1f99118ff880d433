#include "coordinator/coordinator.h"

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
#include "coordinator/checkpoint_retention.h"
#include "coordinator/checkpoint_store.h"
#include "coordinator/study_control.h"
#include "search/rng.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomId(const char* prefix) {
  static std::mt19937_64 gen{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%016llx", prefix, static_cast<unsigned long long>(gen()));
  return buf;
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
  worker::HParams hp;
  if (why.empty() && worker::ParseHParams(config.fixed, &hp).empty() && hp.stop_on_divergence) {
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
    : store_(std::move(store)),
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
  StudyConfig config;
  // Relative data paths resolve from the folder of the config it was created from.
  auto errors = ParseStudyConfig(s.config_text, "study " + std::to_string(s.id), &config,
                                 ConfigLimits::None(),
                                 CreatedFromDir(store_->ListStudyEvents(s.id)));
  if (!errors.empty()) {
    spdlog::error("study {} ({}) cannot be restored: {}", s.id, s.name, errors.front());
    return;
  }
  auto runner = std::make_unique<StudyRunner>(s.id, std::move(config), s.created_at);
  auto trials = store_->ListTrials(s.id);
  auto segments = store_->ListSegments(s.id);
  auto reports = store_->ListReports(s.id);
  runner->Restore(trials, reports);
  for (const auto& [number, cost] : ledger_.RestoreStudy(s.id, segments, now)) {
    if (number >= 0 && number < static_cast<int64_t>(trials.size())) {
      runner->ApplyCost(number, cost.dollars, cost.seconds);
    }
  }
  if (s.state != StudyState::kRunning) runner->ApplyStudyState(s.state, s.end_reason);
  const auto events = store_->ListStudyEvents(s.id);
  ReplayStudyEvents(events, runner.get());
  cost_events_[s.id] = RecordedCostKeys(events);
  // Each trial resumes from its newest checkpoint: a checkpointed report's, or the one a
  // preempted or paused lease handed back (newer on a tie: it came after the report).
  std::map<std::string, double> last_checkpoint_by_lease;
  std::map<int64_t, double> newest_checkpoint_at;
  std::map<std::string, std::string> last_decision_by_lease;
  std::map<std::string, const ReportRecord*> newest_by_lease;
  for (const auto& r : reports) {
    last_decision_by_lease[r.lease_id] = r.decision;
    const ReportRecord*& newest = newest_by_lease[r.lease_id];
    if (newest == nullptr || r.seq > newest->seq) newest = &r;
    if (r.checkpoint.empty()) continue;
    double& lease_at = last_checkpoint_by_lease[r.lease_id];
    lease_at = std::max(lease_at, r.created_at);
    auto [at, fresh] = newest_checkpoint_at.emplace(r.number, r.created_at);
    if (fresh || r.created_at >= at->second) {
      at->second = r.created_at;
      resume_[{s.id, r.number}] = r.checkpoint;
    }
  }
  for (const auto& seg : segments) {
    if (seg.end) {
      if (seg.checkpoint.empty()) continue;
      auto [at, fresh] = newest_checkpoint_at.emplace(seg.number, *seg.end);
      if (fresh || *seg.end >= at->second) {
        at->second = *seg.end;
        resume_[{s.id, seg.number}] = seg.checkpoint;
      }
      continue;
    }
    // A lease held when the coordinator stopped: its worker gets one lease timeout to resume
    // heartbeats and reports before the trial is requeued.
    TrialLease lease{seg.lease_id, seg.worker_id, s.id, seg.number, now};
    ledger_.NoteCheckpoint(seg.lease_id,
                           std::max(seg.start, last_checkpoint_by_lease[seg.lease_id]));
    // A running trial told PAUSE was told so by a study pause (a rung pause parks it).
    lease.study_paused = last_decision_by_lease[seg.lease_id] == "PAUSE" &&
                         seg.number < static_cast<int64_t>(runner->view().trials.size()) &&
                         runner->view().trials[seg.number].state == TrialState::kRunning;
    if (const ReportRecord* newest = newest_by_lease[seg.lease_id]) {
      lease.has_report = true;
      lease.last_seq = newest->seq;
      lease.last_decision = DecisionOf(*newest);
    }
    leases_.Grant(lease);
  }
  spdlog::info("restored study {} '{}' ({}): {} trials, {} open leases", s.id, s.name,
               ToString(s.state), trials.size(), leases_.OfStudy(s.id).size());
  StudyRunner& restored = *runner;
  studies_.Add(std::move(runner));
  RestoreEvaluations(s.id);
  PruneCheckpoints(restored);
}

Coordinator::~Coordinator() {
  // The reports still queued are committed and answered (in order: this empty write last),
  // and what their answers wait for under mu_ runs while everything it touches is here.
  try {
    commit_->Run([] {});
  } catch (const std::exception&) {
  }
  after_commit_.reset();
}

Status Coordinator::StorageError(const std::exception& e, const std::string& what) {
  const std::string msg = e.what();
  spdlog::error("storage error while {}: {}", what, msg);
  // UNAVAILABLE, whatever the cause (disk full, file-size limit, read-only file): the failed
  // transaction was rolled back, and the same call succeeds once the disk does, so clients retry.
  return Status::Error(Status::Code::kUnavailable, "could not record " + what +
                                                       ": database write failed (" + msg +
                                                       "); nothing was changed, retry later");
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
  {
    // Checked before parsing too, so a client over the cap cannot keep the parser busy.
    std::lock_guard<std::mutex> lock(mu_);
    if (Status s = studies_.RunningCap(); !s.ok()) return s;
  }
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
  std::lock_guard<std::mutex> lock(mu_);
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
  studies_.Add(std::make_unique<StudyRunner>(*id, std::move(config), now));
  return Status::Ok();
}

Status Coordinator::GetStudy(int64_t id, StudySummary* out) {
  std::lock_guard<std::mutex> lock(mu_);
  StudyRunner* runner = studies_.Find(id);
  if (!runner) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  const double now = Now();
  const auto record = store_->GetStudy(id);
  const auto segments = store_->ListSegments(id);
  *out = SummarizeStudy(record ? *record : StudyRecord{}, *runner, store_->ListStudyEvents(id),
                        segments, store_->ListIdleSegments(id), ledger_.StudyDollars(id, now),
                        now);
  if (IsOpen(runner->state())) {
    if (Forecast f = ForecastNow(*runner, segments, now); f.possible) out->forecast = f;
  }
  // Idle stretches still open, to now or the worker's last sign of life.
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
  std::vector<int64_t> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, runner] : studies_.all()) ids.push_back(id);
  }
  std::vector<StudySummary> out;
  for (int64_t id : ids) {
    StudySummary s;
    if (GetStudy(id, &s).ok()) out.push_back(std::move(s));
  }
  return out;
}

TrialExtras Coordinator::TrialExtrasOf(int64_t study_id) const {
  TrialExtras extras;
  extras.checkpoint = [this, study_id](int64_t number) {
    return ResumeCheckpoint(study_id, number);
  };
  extras.evaluation = [this, study_id](int64_t number) -> std::optional<EvaluationRecord> {
    auto it = evaluations_.find({study_id, number});
    if (it == evaluations_.end()) return std::nullopt;
    return it->second;
  };
  return extras;
}

Status Coordinator::ListTrials(int64_t study_id, std::vector<TrialSummary>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  StudyRunner* runner = studies_.Find(study_id);
  if (!runner) {
    return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(study_id));
  }
  const double now = Now();
  *out = SummarizeTrials(*runner, store_->ListTrials(study_id), store_->ListReports(study_id),
                         store_->ListSegments(study_id), now, TrialExtrasOf(study_id));
  return Status::Ok();
}

Status Coordinator::CancelStudy(int64_t id, const std::string& user, const std::string& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  StudyRunner* runner = studies_.Find(id);
  if (!runner) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
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
  std::lock_guard<std::mutex> lock(mu_);
  const double now = Now();
  request.id = RandomId("w-");
  request.registered_at = now;
  try {
    store_->UpsertWorker(request);
  } catch (const std::exception& e) {
    return StorageError(e, "the worker");
  }
  workers_[request.id] = Worker{request, now, 0, {}};
  spdlog::info("worker {} registered: {} {} {} at ${:.4f}/h, {} threads", request.id,
               request.name, request.instance_type, request.market, request.price_per_hour,
               request.threads);
  *out = request;
  return Status::Ok();
}

Status Coordinator::AcquireTrial(const std::string& worker_id, AcquireResult* result,
                                 Assignment* out, double idle_exit_s) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = Now();
  Worker* w = nullptr;
  if (Status s = TouchWorker(worker_id, now, &w); !s.ok()) return s;
  // Test evaluations first: short, and a finished study's report waits for its best trial's.
  if (AssignEvaluation(*w, now, out)) {
    *result = AcquireResult::kAssigned;
    return Status::Ok();
  }
  for (auto& [study_id, runner] : studies_.all()) {
    if (w->cannot_run.count(study_id)) continue;
    std::string why_none;
    UpdateQuotaUse(*runner, now);
    auto next = runner->PickNext(now, ledger_.StudyDollars(study_id, now), &why_none);
    if (!next) continue;
    TrialLease lease{RandomId("L-"), worker_id, study_id, next->number, now};
    SegmentRecord seg;
    seg.lease_id = lease.id;
    seg.worker_id = worker_id;
    seg.study_id = study_id;
    seg.number = next->number;
    seg.start = now;
    seg.price_per_hour = w->record.price_per_hour;
    seg.market = w->record.market;
    seg.start_epoch = next->start_epoch;
    try {
      commit_->Run([&] {
        if (next->is_new) {
          TrialRecord t;
          t.study_id = study_id;
          t.number = next->number;
          t.params = next->params;
          t.state = TrialState::kRunning;
          t.created_at = now;
          store_->InsertTrial(t);
        } else {
          store_->UpdateTrialState(study_id, next->number, TrialState::kRunning, "", 0);
        }
        store_->OpenSegment(seg);
      });
    } catch (const std::exception& e) {
      return StorageError(e, "the new lease");
    }
    if (next->is_new) runner->ApplyNewTrial(next->number, next->params);
    runner->ApplyState(next->number, TrialState::kRunning);
    leases_.Grant(lease);
    ledger_.Open(seg);
    CloseIdle(*w, now, "leased");
    w->last_study_id = study_id;

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
    out->metric = config.objective.metric;
    if (!options_.checkpoint_dir.empty() && options_.shared_checkpoints) {
      out->checkpoint_dir = StudyCheckpointDir(study_id);
    }
    out->resume_checkpoint = ResumeCheckpoint(study_id, next->number);
    out->resume_fallbacks = OlderCheckpoints(study_id, next->number, out->resume_checkpoint);
    out->checkpoint_every_epochs = config.checkpoint.every_epochs;
    out->trial = config.trial;
    *result = AcquireResult::kAssigned;
    spdlog::info("[study {}] trial {} {} on {}: {}", study_id, next->number,
                 next->is_new ? "starts" : "resumes at epoch " +
                                               std::to_string(next->start_epoch),
                 worker_id, search::ToString(next->params));
    return Status::Ok();
  }
  bool all_finished = true;
  for (auto& [id, runner] : studies_.all()) {
    MaybeFinishStudy(*runner, now);
    all_finished &= !IsOpen(runner->state());
  }
  all_finished &= !EvaluationsOpen();  // after the loop: a study it ended may have queued one
  ledger_.OpenIdle(worker_id, w->last_study_id, now, w->record.price_per_hour, w->record.market);
  const double idle_since = ledger_.IdleOf(worker_id)->start;
  *result = AcquireResult::kNoWork;
  if (options_.shutdown_when_idle && all_finished) {
    CloseIdle(*w, now, "shutdown");
    *result = AcquireResult::kShutdown;
  } else if (idle_exit_s > 0 && now - idle_since >= idle_exit_s) {
    spdlog::info("worker {} ({}) found no work for {:.0f} s (its idle exit): told to leave",
                 worker_id, w->record.name, now - idle_since);
    CloseIdle(*w, now, "idle-exit");
    *result = AcquireResult::kShutdown;
  }
  return Status::Ok();
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

Status Coordinator::CheckLease(const std::string& worker_id, const std::string& lease_id,
                               TrialLease** out) {
  Worker* w = nullptr;
  if (Status s = TouchWorker(worker_id, Now(), &w); !s.ok()) return s;
  return leases_.Held(worker_id, lease_id, out);
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
  std::unique_lock<std::mutex> lock(mu_);
  search::Decision decided;
  search::Decision* decision = &decided;
  // What needs no write is answered at once, outside mu_.
  auto answer_now = [&](const Status& s) {
    lock.unlock();
    answer(s, decided);
  };
  // A retried report (same lease and seq) gets the answer it got the first time, even when
  // that answer ended the lease: from memory when the lease knows its newest report (once
  // that report's commit, which may still be running, is over), else from the Store.
  const TrialLease* held = leases_.Find(lease_id);
  const bool known = held && held->worker_id == worker_id && held->reports_known &&
                     (!held->has_report || seq >= held->last_seq);
  if (known && held->has_report && seq == held->last_seq) {
    const search::Decision first = held->last_decision;
    const std::shared_future<void> done = held->last_commit;
    lock.unlock();
    auto reply = [this, first, done, answer = std::move(answer)] {
      try {
        if (done.valid()) done.get();
      } catch (const std::exception& e) {
        return answer(StorageError(e, "the report"), first);
      }
      answer(Status::Ok(), first);
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
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return answer_now(s);
  StudyRunner* runner = studies_.Find(lease->study_id);
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
  lease->last_seen = now;
  // A non-finite objective (or training loss, under stop_on_divergence) ends the trial as
  // DIVERGED: the scheduler never sees the value, and the trial is not retried.
  const std::string diverged = DivergenceReason(runner->config(), epoch, metrics);
  UpdateQuotaUse(*runner, now);
  *decision = !diverged.empty() ? search::Decision::Stop(diverged)
                                : runner->Decide(lease->number, epoch, m->second, now,
                                                 ledger_.StudyDollars(lease->study_id, now));
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
  const std::string previous = checkpoint.empty() ? "" : ResumeCheckpoint(r.study_id, r.number);
  // Once committed: a failed write is taken back, and only then can the checkpoint it
  // superseded go (the directory is swept when the lease ends); both under mu_, so not on the
  // writer thread. Then the worker hears the decision.
  const bool prunes = !previous.empty() && previous != checkpoint;
  auto committed = [this, report, previous, paused_by_it, diverged, metric,
                    max_epochs = runner->config().budget.max_epochs, decided,
                    answer = std::move(answer)](std::exception_ptr error) {
    const ReportRecord& r = *report;
    if (error) {
      std::unique_lock<std::mutex> relock(mu_);
      UndoReport(r.lease_id, r.study_id, r.number, r.seq, r.checkpoint, previous, paused_by_it);
      relock.unlock();
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        return answer(StorageError(e, "the report"), decided);
      } catch (...) {
        return answer(StorageError(std::runtime_error("unknown error"), "the report"), decided);
      }
    }
    if (!previous.empty() && previous != r.checkpoint) {
      std::lock_guard<std::mutex> relock(mu_);
      if (StudyRunner* still = studies_.Find(r.study_id)) PruneCheckpoints(*still, {previous});
    }
    std::string shown;
    for (const auto& [k, v] : r.metrics) {
      if (k == metric || k == common::kTrainLoss) shown += fmt::format(" {}={:.4f}", k, v);
    }
    spdlog::info("[study {}] trial {} epoch {}/{}:{} -> {}{}", r.study_id, r.number, r.epoch,
                 max_epochs, shown, r.decision, r.reason.empty() ? "" : " (" + r.reason + ")");
    if (!diverged.empty()) {
      spdlog::warn("[study {}] trial {} DIVERGED: {}", r.study_id, r.number, diverged);
    }
    answer(Status::Ok(), decided);
  };
  // Group commit: the write joins the batch the writer commits next. Memory takes the report
  // now, in mu_'s order (the order of the writes), so the next report decides on it; the worker
  // hears the decision only once it committed, and UndoReport takes it back if it did not.
  const bool state_changes = next_state != trial.state;
  const double ended_at = search::IsTerminal(next_state) ? now : 0;
  std::shared_future<void> done = commit_->Submit(
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
    ledger_.NoteCheckpoint(lease_id, now);
    resume_[{r.study_id, r.number}] = checkpoint;
  }
}

void Coordinator::UndoReport(const std::string& lease_id, int64_t study_id, int64_t number,
                             int64_t seq,
                             const std::string& checkpoint, const std::string& previous_checkpoint,
                             bool paused_by_it) {
  // Writes queued after this one were decided on a view that held it; let them land (or fail)
  // first, so that the Store read below is final for everything memory applied.
  try {
    commit_->Run([] {});
  } catch (const std::exception&) {
  }
  if (StudyRunner* runner = studies_.Find(study_id)) {
    try {
      runner->Rebuild(store_->ListTrials(study_id), store_->ListReports(study_id));
    } catch (const std::exception& e) {
      spdlog::error("[study {}] could not reread its history after a failed report write: {}",
                    study_id, e.what());
    }
  }
  if (TrialLease* lease = leases_.Find(lease_id); lease && lease->last_seq == seq) {
    // Its previous report's answer is in the Store; a retry of this one is a new report.
    lease->reports_known = false;
    if (paused_by_it) lease->study_paused = false;
  }
  auto resume = resume_.find({study_id, number});
  if (!checkpoint.empty() && resume != resume_.end() && resume->second == checkpoint) {
    if (previous_checkpoint.empty()) {
      resume_.erase(resume);
    } else {
      resume->second = previous_checkpoint;
    }
  }
}

std::string Coordinator::ResumeCheckpoint(int64_t study_id, int64_t number) const {
  auto it = resume_.find({study_id, number});
  return it == resume_.end() ? "" : it->second;
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
  std::lock_guard<std::mutex> lock(mu_);
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return s;
  if (!std::isfinite(redone_seconds) || redone_seconds < 0) {
    return Status::Error(Status::Code::kInvalidArgument, "redone_seconds must be >= 0");
  }
  try {
    store_->SetRedoneSeconds(lease_id, redone_seconds);
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

void Coordinator::PruneCheckpoints(const StudyRunner& runner,
                                   const std::vector<std::string>& only) {
  if (options_.checkpoint_dir.empty()) return;
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
  std::set<int64_t> leased = leases_.TrialsOf(runner.id());
  for (const auto& [key, e] : evaluations_) {  // a checkpoint waiting to be scored stays
    const bool open = e.state == EvaluationState::kPending || e.state == EvaluationState::kRunning;
    if (key.first == runner.id() && open) leased.insert(key.second);
  }
  std::map<int64_t, TrialCheckpoints> trials;
  const auto& view = runner.view();
  for (const auto& t : view.trials) {
    if (keep != CheckpointKeep::kBest && !named.count(t.number)) continue;
    TrialCheckpoints& c = trials[t.number];
    c.newest = ResumeCheckpoint(runner.id(), t.number);
    c.settled = search::IsTerminal(t.state) && !leased.count(t.number);
    c.failed = t.state == TrialState::kFailed || t.state == TrialState::kDiverged;
    if (auto v = t.LastValue()) c.score = view.Score(*v);
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

void Coordinator::ApplyLeaseEnd(const std::string& lease_id, double end) {
  if (!leases_.Find(lease_id)) return;
  if (auto charge = ledger_.Close(lease_id, end)) {
    if (StudyRunner* runner = studies_.Find(charge->study_id)) {
      runner->ApplyCost(charge->number, charge->dollars, charge->seconds);
    }
  }
  leases_.End(lease_id);
}

Status Coordinator::CompleteTrial(const std::string& worker_id, const std::string& lease_id,
                                  const std::map<std::string, double>& final_metrics,
                                  const std::string& checkpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = EndEvaluationLease(worker_id, lease_id, EvaluationState::kDone, final_metrics, "")) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return s;
  if (Status s = CheckCheckpointName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = studies_.Find(lease->study_id);
  const auto& trial = runner->view().trials.at(lease->number);
  const double now = Now();
  // A running trial that ends here trained to its last epoch; stopped or paused ones were
  // decided at their last report and keep that state and reason.
  const bool requeue = lease->study_paused && trial.state == TrialState::kRunning;
  if (requeue) {
    const std::string lease_copy = lease_id;
    return EndLeaseAndRequeue(lease_copy, now, kStudyPausedSegment, checkpoint, 0.0);
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
  try {
    commit_->Run([&] {
      if (completes) {
        store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kCompleted, reason,
                                 now);
      }
      if (!final_metrics.empty()) {
        store_->SetFinalMetrics(lease->study_id, lease->number, final_metrics);
      }
      store_->CloseSegment(lease_id, now, segment_reason, kept, 0.0);
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the completion");
  }
  const int64_t study_id = lease->study_id;
  const int64_t number = lease->number;
  if (completes) runner->ApplyState(number, TrialState::kCompleted);
  if (!kept.empty()) resume_[{study_id, number}] = kept;
  ApplyLeaseEnd(lease_id, now);
  spdlog::info("[study {}] trial {} {}", study_id, number,
               completes ? reason : std::string("released (") + segment_reason + ")");
  MaybeFinishStudy(*runner, now);
  PruneCheckpoints(*runner);
  return Status::Ok();
}

Status Coordinator::FailTrial(const std::string& worker_id, const std::string& lease_id,
                              const std::string& error, bool worker_cannot_run) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = EndEvaluationLease(worker_id, lease_id, EvaluationState::kFailed, {}, error,
                                  worker_cannot_run)) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return s;
  StudyRunner* runner = studies_.Find(lease->study_id);
  const double now = Now();
  if (worker_cannot_run) {
    // Not the trial's fault: requeue it for a worker that can, and offer this one no more.
    Worker& w = workers_.at(worker_id);
    const std::string why = "requeued: worker " + w.record.name + " cannot run it: " + error;
    try {
      commit_->Run([&] {
        store_->CloseSegment(lease_id, now, "refused");
        store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why, 0);
      });
    } catch (const std::exception& e) {
      return StorageError(e, "the refusal");
    }
    const int64_t study_id = lease->study_id, number = lease->number;
    runner->ApplyState(number, TrialState::kPending);
    ApplyLeaseEnd(lease_id, now);
    w.cannot_run.insert(study_id);
    spdlog::warn("[study {}] trial {} {}; that worker gets none of the study's trials", study_id,
                 number, why);
    MaybeFailUnrunnable(*runner, error, now);
    return Status::Ok();
  }
  const std::string reason = "failed: " + error;
  try {
    commit_->Run([&] {
      store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kFailed, reason, now);
      store_->CloseSegment(lease_id, now, "failed");
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the failure");
  }
  const int64_t study_id = lease->study_id;
  const int64_t number = lease->number;
  runner->ApplyState(number, TrialState::kFailed);
  ApplyLeaseEnd(lease_id, now);
  spdlog::warn("[study {}] trial {} {}", study_id, number, reason);
  MaybeFinishStudy(*runner, now);
  PruneCheckpoints(*runner);
  return Status::Ok();
}

Status Coordinator::Heartbeat(const std::string& worker_id,
                              const std::vector<std::string>& lease_ids,
                              std::vector<std::string>* revoked) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = Now();
  Worker* w = nullptr;
  if (Status s = TouchWorker(worker_id, now, &w); !s.ok()) return s;
  for (auto& id : leases_.Heartbeat(worker_id, lease_ids, now)) revoked->push_back(std::move(id));
  return Status::Ok();
}

Status Coordinator::PreemptTrial(const std::string& worker_id, const std::string& lease_id,
                                 const std::string& checkpoint, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = EndEvaluationLease(worker_id, lease_id, EvaluationState::kPending, {},
                                  "preempted (" + reason + ")")) {
    return *s;
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return s;
  if (Status s = CheckCheckpointName(checkpoint, lease->number); !s.ok()) return s;
  StudyRunner* runner = studies_.Find(lease->study_id);
  const double now = Now();
  const double wasted = checkpoint.empty() ? ledger_.LostSecondsAt(lease_id, now) : 0.0;
  // Its worker stopped because the study was paused (Ctrl-C on `sift run`): not a preemption.
  if (runner->state() == StudyState::kPaused) {
    return EndLeaseAndRequeue(lease_id, now, kStudyPausedSegment, checkpoint, wasted);
  }
  const bool requeue = runner->view().trials.at(lease->number).state == TrialState::kRunning;
  const std::string why = "requeued: preempted (" + reason + ")";
  try {
    commit_->Run([&] {
      store_->CloseSegment(lease_id, now, "preempted", checkpoint, wasted);
      if (requeue) {
        store_->UpdateTrialState(lease->study_id, lease->number, TrialState::kPending, why, 0);
      }
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the preemption");
  }
  const int64_t study_id = lease->study_id, number = lease->number;
  if (requeue) runner->ApplyState(number, TrialState::kPending);
  if (!checkpoint.empty()) resume_[{study_id, number}] = checkpoint;
  ApplyLeaseEnd(lease_id, now);
  spdlog::warn("[study {}] trial {}: worker {} preempted ({}); {}{}", study_id, number, worker_id,
               reason, requeue ? "requeued" : "released",
               checkpoint.empty() ? "" : ", resumes from " + checkpoint);
  PruneCheckpoints(*runner);
  return Status::Ok();
}

Status Coordinator::CheckpointPath(const std::string& worker_id, const std::string& lease_id,
                                   const std::string& name, std::string* path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const EvaluationLease* e = leases_.FindEvaluation(lease_id);
      e && e->worker_id == worker_id) {
    // An evaluation reads the one checkpoint it was given, and writes none.
    if (name != ResumeCheckpoint(e->study_id, e->number)) {
      return Status::Error(Status::Code::kInvalidArgument,
                           "'" + name + "' is not the checkpoint this evaluation scores");
    }
    *path = StudyCheckpointDir(e->study_id) + "/" + name;
    return Status::Ok();
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(worker_id, lease_id, &lease); !s.ok()) return s;
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
  std::lock_guard<std::mutex> lock(mu_);
  const double now = Now();
  RenewStudyLeases(now);
  for (const auto& id : leases_.Expired(now, options_.lease_timeout_s)) {
    const TrialLease lease = *leases_.Find(id);
    StudyRunner* runner = studies_.Find(lease.study_id);
    const bool requeue =
        runner && runner->view().trials.at(lease.number).state == TrialState::kRunning;
    // A lost VM is billed to its last sign of life; the work since its last checkpoint is lost.
    const double end = std::max(ledger_.Start(id).value_or(lease.last_seen), lease.last_seen);
    const double wasted = ledger_.LostSecondsAt(id, end);
    try {
      commit_->Run([&] {
        store_->CloseSegment(id, end, "expired", "", wasted);
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
    ApplyLeaseEnd(id, end);
    if (runner) PruneCheckpoints(*runner);
    spdlog::warn("[study {}] trial {}: lease {} of worker {} expired (no heartbeat for {:.0f} s){}",
                 lease.study_id, lease.number, id, lease.worker_id, now - lease.last_seen,
                 requeue ? "; requeued" : "");
  }
  ExpireEvaluationLeases(now);
  for (auto& [id, runner] : studies_.all()) {
    if (IsOpen(runner->state())) WatchCosts(*runner, now);
    MaybeFinishStudy(*runner, now);
  }
  for (auto& [id, w] : workers_) {
    const Ledger::Idle* idle = ledger_.IdleOf(id);
    if (idle && now - w.last_seen > options_.lease_timeout_s) {
      CloseIdle(w, std::max(idle->start, w.last_seen), "lost");
    }
  }
  ForgetLostWorkers(workers_, leases_.Holders(), ledger_, now, options_.lease_timeout_s);
}


void Coordinator::CloseIdle(Worker& w, double end, const char* reason) {
  const auto idle = ledger_.CloseIdle(w.record.id, end, reason);
  if (!idle) return;
  try {
    store_->InsertIdleSegment(*idle);
  } catch (const std::exception& e) {
    StorageError(e, "an idle stretch");  // logged; the ledger of trials is unaffected
  }
}

void Coordinator::MaybeFailUnrunnable(StudyRunner& runner, const std::string& why, double now) {
  if (!options_.fail_unrunnable_studies || runner.state() != StudyState::kRunning) return;
  if (leases_.AnyOf(runner.id())) return;  // some worker is running one of its trials
  for (const auto& [id, w] : workers_) {
    const bool live = now - w.last_seen <= options_.lease_timeout_s;
    if (live && !w.cannot_run.count(runner.id())) return;
  }
  EndStudy(runner, StudyState::kFailed, "no worker can run its trials: " + why, now);
}

void Coordinator::MaybeFinishStudy(StudyRunner& runner, double now) {
  if (runner.state() != StudyState::kRunning) return;
  if (leases_.AnyOf(runner.id())) return;  // a worker still owes a completion
  std::string reason;
  UpdateQuotaUse(runner, now);
  if (!runner.Finished(now, ledger_.StudyDollars(runner.id(), now), &reason)) return;
  const auto& trials = runner.view().trials;
  const bool all_failed =
      !trials.empty() && std::all_of(trials.begin(), trials.end(), [](const auto& t) {
        return t.state == TrialState::kFailed;
      });
  if (!all_failed) return EndStudy(runner, StudyState::kCompleted, reason, now);
  std::string first;
  try {
    const auto records = store_->ListTrials(runner.id());
    if (!records.empty()) first = "; trial 0 " + records.front().end_reason;
  } catch (const std::exception&) {
  }
  EndStudy(runner, StudyState::kFailed,
           "every trial failed (" + std::to_string(trials.size()) + " of " +
               std::to_string(trials.size()) + ")" + first,
           now);
}

void Coordinator::EndStudy(StudyRunner& runner, StudyState state, const std::string& reason,
                           double now) {
  // Paused trials were never promoted; pending ones (a study no worker could run) never ran.
  std::map<int64_t, std::string> parked;
  for (const auto& t : runner.view().trials) {
    if (t.state == TrialState::kPaused) parked[t.number] = "paused at a rung and never promoted";
    if (t.state == TrialState::kPending) parked[t.number] = "never run: " + reason;
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
  PruneCheckpoints(runner);
  if (state == StudyState::kCompleted) QueueBestEvaluation(runner, now);
  auto log = state == StudyState::kFailed ? spdlog::level::err : spdlog::level::info;
  spdlog::log(log, "[study {}] {}: {}; ${:.4f} spent", runner.id(),
              state == StudyState::kFailed ? "FAILED" : "finished", reason,
              ledger_.StudyDollars(runner.id(), now));
}

bool Coordinator::AllStudiesFinished() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, runner] : studies_.all()) {
    if (IsOpen(runner->state())) return false;  // a paused study can still be resumed
  }
  return !EvaluationsOpen();  // a finished study's best trial is still being scored
}

}  // namespace sift::coordinator

#include "coordinator/core/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "coordinator/core/stored_study.h"

namespace sift::coordinator {

using search::TrialState;

std::string CreatedFromDir(const std::vector<StudyEventRecord>& events) {
  for (const auto& e : events) {
    if (e.action == "created" && std::filesystem::path(e.detail).is_absolute()) {
      return common::ConfigDir(e.detail);
    }
  }
  return "";
}

Coordinator::Coordinator(std::unique_ptr<Store> store, CoordinatorOptions options)
    : CoordinatorState(std::move(store), std::move(options)),
      lease_endings_(*this, *this),
      acquisition_(*this, *this) {
  const double now = Now();
  for (const auto& w : store_->ListWorkers()) {
    workers_.Add(w, now);
  }
  for (const auto& s : store_->ListStudies()) {
    // With study leases, an open study another coordinator serves is left to it.
    if (IsOpen(s.state) && !studies_.Claim(s.id, now)) continue;
    RestoreStudy(s, now);
  }
}

void Coordinator::RestoreStudy(const StudyRecord& s, double now) {
  const auto events = store_->ListStudyEvents(s.id);
  common::StudyConfig config;
  if (std::string problem = ParseStoredConfig(s, events, &config); !problem.empty()) {
    spdlog::error("study {} ({}) cannot be restored: {}", s.id, s.name, problem);
    return;
  }
  const common::Tags tags = config.tags;
  search::Priors priors;
  if (std::string problem = LoadWarmStart(config, *store_, &priors); !problem.empty()) {
    spdlog::error("study {} ({}): {}; it goes on without the earlier results", s.id, s.name,
                  problem);
  }
  // Served from now on, and filled under its lock: a call that finds it (a worker of a study
  // taken over reporting on a lease restored below) waits until it is whole.
  auto study = std::make_shared<ServedStudy>(
      std::make_unique<StudyRunner>(s.id, std::move(config), s.created_at, std::move(priors)));
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
  RestoreRunner(
      s, trials,
      [&](const std::function<void(const ReportRecord&)>& apply) {
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
            if (!r.checkpoint.empty())
              lease.checkpoint_at = std::max(lease.checkpoint_at, r.created_at);
          }
          resume.NoteReport(r);
        });
      },
      events, runner);
  std::map<int64_t, TrialCost> costs;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    costs = ledger_.RestoreStudy(s.id, segments, now);
    costs_.SetTags(s.id, tags);
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
      if (seg.number < static_cast<int64_t>(trials.size())) {
        runner->ApplyCheckpoint(seg.number, seg.checkpoint);
      }
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
  checkpoints_.Prune(*study);
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

Status Coordinator::CreateStudy(const std::string& config_text, const std::string& origin,
                                int64_t* id, std::vector<std::string>* errors,
                                const std::string& user) {
  const common::ConfigLimits& limits = options_.config_limits;
  if (config_text.size() > limits.max_bytes) {
    return Status::Error(Status::Code::kResourceExhausted,
                         origin + ": " + std::to_string(config_text.size()) +
                             " bytes, over the limit of " + std::to_string(limits.max_bytes) +
                             " (--max-config-bytes)");
  }
  // Checked before parsing too, so a client over the cap cannot keep the parser busy.
  if (Status s = studies_.RunningCap(); !s.ok()) return s;
  common::StudyConfig config;
  // `origin` is the config file's absolute path when the client knows it (sift submit, sift run):
  // relative data paths are taken from its folder.
  const bool from_file = std::filesystem::path(origin).is_absolute();
  *errors = common::ParseStudyConfig(config_text, origin, &config, limits,
                                     from_file ? common::ConfigDir(origin) : "");
  if (!errors->empty()) {
    std::string msg = "invalid study config:";
    for (const auto& e : *errors) msg += "\n  " + e;
    return Status::Error(Status::Code::kInvalidArgument, msg);
  }
  search::Priors priors;
  if (std::string problem = LoadWarmStart(config, *store_, &priors); !problem.empty()) {
    return Status::Error(Status::Code::kInvalidArgument, "invalid study config:\n  " + problem);
  }
  // One creation at a time, so that two cannot both pass the cap. It is taken before any other
  // lock (RunningCap takes the study locks in turn).
  std::lock_guard<std::mutex> creating(create_mu_);
  if (Status s = studies_.RunningCap(); !s.ok()) return s;
  const double now = Now();
  if (Status s = costs_.CheckQuotas(config.tags, now); !s.ok()) return s;
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
               config.name, config.searcher.type, config.scheduler.type, config.budget.max_trials,
               config.budget.max_epochs);
  {
    std::lock_guard<std::mutex> table(table_mu_);
    costs_.SetTags(*id, config.tags);
  }
  if (!priors.points.empty()) {
    spdlog::info("study {}: warm start from {} finished trials of earlier studies", *id,
                 priors.points.size());
  }
  studies_.Add(std::make_shared<ServedStudy>(
      std::make_unique<StudyRunner>(*id, std::move(config), now, std::move(priors))));
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
  if (!options_.checkpoint_dir.empty()) out->checkpoint_dir = checkpoints_.StudyDir(id);
  // Idle stretches still open, to now or the worker's last sign of life.
  std::lock_guard<std::mutex> table(table_mu_);
  ledger_.OpenIdleOf(
      id, [&](const std::string& worker_id) { return workers_.HeardUntil(worker_id, now); },
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
  extras.checkpoint = [&study](int64_t number) { return TrialCheckpoints::Resume(study, number); };
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
  *out =
      SummarizeTrials(*study->runner, store_->ListTrials(study_id), store_->ListReports(study_id),
                      store_->ListSegments(study_id), now, TrialExtrasOf(*study));
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

std::unique_lock<std::mutex> Coordinator::LockStudyForTest(int64_t study_id) {
  LockedStudy locked = LockStudy(study_id);
  return std::move(locked.lock);
}

void Coordinator::Tick() {
  const double now = Now();
  RenewStudyLeases(now);
  lease_endings_.ExpireLeases(now);
  ExpireEvaluationLeases(now);
  for (const auto& study : studies_.All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    if (study->dropped) continue;
    if (IsOpen(study->runner->state())) costs_.Watch(*study, now);
    MaybeFinishStudy(*study, now);
  }
  std::vector<std::pair<std::string, double>> lost;  // workers idle and silent: (id, end)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    lost = workers_.LostIdle(ledger_, now);
  }
  for (const auto& [id, end] : lost) acquisition_.CloseIdle(id, end, "lost");
  std::lock_guard<std::mutex> table(table_mu_);
  workers_.ForgetLost(leases_.Holders(), ledger_, now);
}

void Coordinator::MaybeFailUnrunnable(ServedStudy& study, const std::string& why, double now) {
  StudyRunner& runner = *study.runner;
  if (!options_.fail_unrunnable_studies || runner.state() != StudyState::kRunning) return;
  {
    std::lock_guard<std::mutex> table(table_mu_);
    if (leases_.AnyOf(runner.id())) return;  // some worker is running one of its trials
    if (workers_.SomeLiveCanRun(runner.id(), now)) return;
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
  costs_.UpdateQuotaUse(runner, now);
  const double spent = StudyDollars(runner.id(), now);
  if (!runner.Finished(now, spent, &reason)) return;
  costs_.FireBudgetAlerts(study, spent, now);
  const auto& trials = runner.view().trials;
  const bool all_failed =
      !trials.empty() && std::all_of(trials.begin(), trials.end(),
                                     [](const auto& t) { return t.state == TrialState::kFailed; });
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
  checkpoints_.Prune(study);
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

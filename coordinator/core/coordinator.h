// Coordinator: owns the Store, one StudyRunner per study, the workers, their leases and the
// ledger. Locks at the edge: every public method takes the locks it needs (see "Locks" below);
// everything below them (StudyRunner, search/, LeaseTable, Ledger) is single-threaded. The gRPC
// services are thin adapters over this.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/config/price_catalog.h"
#include "coordinator/core/acquisition.h"
#include "coordinator/core/coordinator_state.h"
#include "coordinator/core/cost_watch.h"
#include "coordinator/core/lease_endings.h"
#include "coordinator/core/lease_table.h"
#include "coordinator/core/progress_log.h"
#include "coordinator/core/status.h"
#include "coordinator/core/storage_error.h"
#include "coordinator/core/study_registry.h"
#include "coordinator/core/study_runner.h"
#include "coordinator/core/summaries.h"
#include "coordinator/core/trial_checkpoints.h"
#include "coordinator/core/worker_table.h"
#include "coordinator/cost/forecast.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/cost/quota.h"
#include "coordinator/store/group_commit.h"
#include "coordinator/store/records.h"
#include "coordinator/store/store.h"
#include "coordinator/store/task_thread.h"
#include "search/decision.h"

namespace sift::coordinator {

// `sift coordinator --db`: a postgresql:// database may be shared, so the coordinator takes
// study leases (lease_s; 0: 15 s) as owner HOST/LISTEN (a restart on the same address takes its
// studies straight back). A SQLite file: no leases.
CoordinatorOptions SharedDatabaseOptions(const std::string& db, const std::string& listen,
                                         double lease_s);

// A budget change; only the fields that are set change.
struct BudgetChange {
  std::optional<double> max_dollars, max_hours;
  std::optional<int64_t> max_trials;
};

// The folder of the config file a study was created from (its "created" event names the file
// when the client gave an absolute path), "" if unknown: where its relative data paths resolve.
std::string CreatedFromDir(const std::vector<StudyEventRecord>& events);

// Locks, so that two studies never wait on each other:
//  - a study's lock (ServedStudy::mu, coordinator/core/study_registry.h): its StudyRunner, its
//    resume points, its test evaluations, its cost alerts, and the report fields of its trial
//    leases. Its Store writes are submitted under it, so they commit in the order memory took
//    them. A call may wait for a commit under it: the commit thread takes no study or table
//    lock (a report's completion that needs its study's lock, UndoReport or pruning, runs on
//    the after-commit thread).
//  - the table lock (table_mu_): the LeaseTable's maps and each lease's last_seen, the
//    WorkerTable, the Ledger and CostWatch's tags of the studies (quotas add dollars across
//    studies). Held briefly: never across a Store write or a commit wait.
//  - the registry's own locks (its map under a shared_mutex, its study leases): leaves, held
//    only inside StudyRegistry's methods.
// Order: create_mu_ (CreateStudy only) -> study -> table -> registry. No call holds two study
// locks: AcquireTrial and Tick walk the studies one lock at a time, and AcquireTrial first tries
// the studies not busy. A trial lease ends only under its study's lock, so a TrialLease* found
// under the table lock stays valid while the study's lock is held.
// The state it shares with its parts is a private base (coordinator_state.h); what they ask of
// its study-level steps, the hooks it implements.
class Coordinator : private CoordinatorState,
                    private LeaseEndings::Hooks,
                    private Acquisition::Hooks {
 public:
  // Rebuilds every study from `store`; throws if the database cannot be read.
  Coordinator(std::unique_ptr<Store> store, CoordinatorOptions options);
  // Answers the reports still waiting for their commit first.
  ~Coordinator();

  // Studies.
  Status CreateStudy(const std::string& config_text, const std::string& origin, int64_t* id,
                     std::vector<std::string>* errors, const std::string& user = "");
  Status GetStudy(int64_t id, StudySummary* out);
  std::vector<StudySummary> ListStudies();
  Status ListTrials(int64_t study_id, std::vector<TrialSummary>* out);
  // Population-based training's exploits of the study, as stored.
  std::vector<ExploitRecord> ListExploits(int64_t study_id) {
    return store_->ListExploits(study_id);
  }
  // Control, each recorded in the study's audit trail with `user` and `detail` (e.g. "SIGINT").
  Status CancelStudy(int64_t id, const std::string& user = "", const std::string& detail = "");
  // Pause: no new work is handed out; running trials checkpoint and hand back at their next
  // epoch (or sooner, when their worker stops). Resume: work is handed out again. Both are
  // no-ops on a study already in that state, and FAILED_PRECONDITION on an ended one.
  Status PauseStudy(int64_t id, const std::string& user, const std::string& detail = "");
  Status ResumeStudy(int64_t id, const std::string& user, const std::string& detail = "");
  Status UpdateBudget(int64_t id, const BudgetChange& change, const std::string& user);
  // Ends the study's leases whose workers were stopped without handing back (a second Ctrl-C):
  // their trials resume from their last checkpoint. Returns how many it ended.
  int InterruptLeases(int64_t study_id);

  // Workers.
  Status RegisterWorker(WorkerRecord request, WorkerRecord* out) {
    return acquisition_.RegisterWorker(std::move(request), out);
  }
  // `idle_exit_s` > 0: answer kShutdown once the worker has found no work for that long.
  Status AcquireTrial(const std::string& worker_id, AcquireResult* result, Assignment* out,
                      double idle_exit_s = 0) {
    return acquisition_.AcquireTrial(worker_id, result, out, idle_exit_s);
  }
  Status ReportProgress(const std::string& worker_id, const std::string& lease_id, int64_t seq,
                        int64_t epoch, const std::map<std::string, double>& metrics,
                        const std::string& checkpoint, search::Decision* decision);
  // ReportProgress without a thread waiting for the commit: decides and queues the report's
  // write, and calls `answer` once with what ReportProgress would return. A refused report or
  // a retry answered from the Store is answered at once, on the caller's thread; else once the
  // write (or the first report's, for a retry) committed or failed, on the group commit's
  // writer thread (or, when the Coordinator's lock is needed first, on its after-commit
  // thread). `answer` must not wait for the Coordinator or its commits. What throws (an
  // unreadable record) throws before anything was queued, and `answer` is then never called.
  using ReportAnswer = std::function<void(const Status&, const search::Decision&)>;
  void ReportProgressAsync(const std::string& worker_id, const std::string& lease_id, int64_t seq,
                           int64_t epoch, const std::map<std::string, double>& metrics,
                           const std::string& checkpoint, ReportAnswer answer);
  // `checkpoint`: for a paused trial, the file its promotion resumes from.
  Status CompleteTrial(const std::string& worker_id, const std::string& lease_id,
                       const std::map<std::string, double>& final_metrics,
                       const std::string& checkpoint = "") {
    return lease_endings_.CompleteTrial(worker_id, lease_id, final_metrics, checkpoint);
  }
  // `worker_cannot_run`: the worker cannot run this study at all (its data is missing there):
  // the trial is requeued, not failed, and the worker is offered none of the study's trials.
  Status FailTrial(const std::string& worker_id, const std::string& lease_id,
                   const std::string& error, bool worker_cannot_run = false) {
    return lease_endings_.FailTrial(worker_id, lease_id, error, worker_cannot_run);
  }
  Status Heartbeat(const std::string& worker_id, const std::vector<std::string>& lease_ids,
                   std::vector<std::string>* revoked) {
    return lease_endings_.Heartbeat(worker_id, lease_ids, revoked);
  }
  // A worker leaving under a spot notice: requeue its trial now, resuming from `checkpoint`.
  Status PreemptTrial(const std::string& worker_id, const std::string& lease_id,
                      const std::string& checkpoint, const std::string& reason) {
    return lease_endings_.PreemptTrial(worker_id, lease_id, checkpoint, reason);
  }
  // A resume fell back past `damaged` (a damaged or missing checkpoint) and retrained
  // `redone_seconds` of work it held: the lease's segment counts them as waste.
  Status RecordRedoneWork(const std::string& worker_id, const std::string& lease_id,
                          double redone_seconds, const std::string& damaged);
  // Where the caller may write (upload) or read (download) checkpoint `name` of its lease's trial.
  Status CheckpointPath(const std::string& worker_id, const std::string& lease_id,
                        const std::string& name, std::string* path);

  // Asks for a finished trial's held-out test score: a worker scores its newest checkpoint once
  // (coordinator/core/test_evaluations.cc). NOT_FOUND for an unknown study or trial,
  // FAILED_PRECONDITION for a trial that is still running or has no checkpoint. One scored or
  // queued already is left as it is; a failed one is asked again. `out`: the trial now.
  Status RequestEvaluation(int64_t study_id, int64_t number, const std::string& user,
                           TrialSummary* out = nullptr);

  // Expires silent leases and closes finished studies; called periodically by the server.
  void Tick();
  bool AllStudiesFinished();
  const CoordinatorOptions& options() const { return options_; }
  // A clean shutdown gives the study leases back, so a standby takes the studies over at once.
  void ReleaseStudyLeases();

 private:
  friend struct CoordinatorTestPeer;  // tests/coordinator/core/coordinator_locks_test.cc
  using Worker = WorkerTable::Worker;
  // For tests: holds study `id`'s lock as a long decision or commit of that study would.
  std::unique_lock<std::mutex> LockStudyForTest(int64_t study_id);
  // Rebuilds one study (its trials, leases, ledger and resume points) from the Store and serves
  // it; it is filled under its own lock, so nobody sees it half restored.
  void RestoreStudy(const StudyRecord& s, double now);
  // Study leases (coordinator/core/study_leases.cc): renews them, drops the studies whose lease
  // passed to another coordinator and takes over those whose lease is free.
  void RenewStudyLeases(double now);
  void DropStudy(int64_t study_id);
  // test_evaluations.cc. The caller holds the study's lock (or the study is not served yet).
  void RestoreEvaluations(ServedStudy& study);
  // Records an evaluation's new state in memory and recounts the study's pending and open ones.
  static void SetEvaluation(ServedStudy& study, const EvaluationRecord& e);
  // Queues the best trial's test evaluation as a study completes (best with a checkpoint).
  void QueueBestEvaluation(ServedStudy& study, double now);
  Status QueueEvaluation(ServedStudy& study, int64_t number, const std::string& by, double now);
  // Acquisition::Hooks (test_evaluations.cc).
  bool AssignEvaluation(const std::string& worker_id, const Worker& w, double now,
                        Assignment* out) override;
  bool EvaluationsOpen() override;
  // For UndoReport (trial_reports.cc).
  void RereadStudy(ServedStudy& study) { acquisition_.RereadStudy(study); }
  // LeaseEndings::Hooks (test_evaluations.cc).
  std::optional<Status> EndEvaluationLease(ServedStudy* study, const std::string& worker_id,
                                           const std::string& lease_id, EvaluationState state,
                                           const std::map<std::string, double>& metrics,
                                           const std::string& error, bool cannot_run) override;
  void ExpireEvaluationLeases(double now);
  // Both classes' hooks.
  void MaybeFinishStudy(ServedStudy& study, double now) override;
  // Ends the study FAILED when every live worker refused it (fail_unrunnable_studies).
  void MaybeFailUnrunnable(ServedStudy& study, const std::string& why, double now) override;
  void EndStudy(ServedStudy& study, StudyState state, const std::string& reason, double now);
  // A report whose write failed to commit: takes back what ReportProgress applied to memory
  // (the study is rebuilt from the Store once every write queued before it has landed).
  void UndoReport(ServedStudy& study, const std::string& lease_id, int64_t number, int64_t seq,
                  const std::string& checkpoint, const std::string& previous_checkpoint,
                  bool paused_by_it);
  // Sets an open study's state and records who did it; the caller holds its lock.
  Status SetOpenState(ServedStudy& study, StudyState state, const std::string& action,
                      const std::string& user, const std::string& detail);
  // What its trials' summaries take from memory: newest checkpoints, test evaluations. Valid
  // while the study's lock is held.
  static TrialExtras TrialExtrasOf(const ServedStudy& study);

  ProgressLog progress_;  // which reports' lines go to info (its own lock, a leaf)
  std::mutex create_mu_;  // one CreateStudy at a time (the running cap); before any other lock
  LeaseEndings lease_endings_;  // complete, fail, preempt, hand back, heartbeats, expiry
  Acquisition acquisition_;     // registration, AcquireTrial
};

}  // namespace sift::coordinator

// What the Coordinator's parts share: the Store and its commits, the options, the studies served
// and the tables under the table lock, with the few lookups over them that every part makes.
// Gathered so that LeaseEndings and Acquisition take it by reference, not the Coordinator; the
// Coordinator is one (a private base), so its own files name these members as before.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/config/price_catalog.h"
#include "coordinator/core/cost_watch.h"
#include "coordinator/core/lease_table.h"
#include "coordinator/core/status.h"
#include "coordinator/core/study_registry.h"
#include "coordinator/core/trial_checkpoints.h"
#include "coordinator/core/worker_table.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/cost/quota.h"
#include "coordinator/store/fenced_store.h"
#include "coordinator/store/group_commit.h"
#include "coordinator/store/store.h"
#include "coordinator/store/task_thread.h"

namespace sift::coordinator {

struct CoordinatorOptions {
  double lease_timeout_s = 30.0;      // a lease without heartbeat for this long is lost
  double heartbeat_interval_s = 5.0;  // what workers are told to use
  common::PriceCatalog catalog;
  bool shutdown_when_idle = false;  // embedded run: tell workers to exit once all is done
  // Embedded run: a study that every live worker refused (FailTrial with worker_cannot_run)
  // ends FAILED instead of waiting for a worker that can run it.
  bool fail_unrunnable_studies = false;
  // Where checkpoints live. With shared_checkpoints the workers read and write this directory
  // directly (embedded run, shared filesystem); otherwise they upload and download through the
  // Workers service and it is the coordinator's own store. "" disables resumes.
  std::string checkpoint_dir;
  bool shared_checkpoints = false;
  std::function<double()> clock;  // unix seconds; defaults to the system clock
  // Bounds on what clients can make the coordinator hold: every running study keeps its config
  // and history in memory, so both are capped (RESOURCE_EXHAUSTED past them).
  common::ConfigLimits config_limits;
  int64_t max_running_studies = 64;
  // Coordinators sharing a database (PostgreSQL): each serves only the open studies whose lease
  // it holds in the database, renews them every third of study_lease_s, and takes over a study
  // whose lease expired (its coordinator died). 0: no leases, it serves every study (SQLite).
  double study_lease_s = 0;
  std::string owner;  // this coordinator in the lease table; unique among those sharing it
  // Dollar limits per tag across studies (`sift coordinator --quota team=vision:100`), enforced
  // as a study's own max_dollars is (coordinator/cost/quota.h).
  std::vector<Quota> quotas;
  // An open study's forecast is remade for its alerts when a trial has ended since the last,
  // at most this often (it reads every trial and lease).
  double forecast_interval_s = 5;
};

// Unix seconds now: the Coordinator's default clock, and the reports' "now".
double SystemNow();

// The locks named here are those of coordinator.h's "Locks".
struct CoordinatorState {
  CoordinatorState(std::unique_ptr<Store> store, CoordinatorOptions options);

  double Now() const { return options_.clock(); }
  // A study locked, or empty (false) when it is not served here.
  struct LockedStudy {
    std::shared_ptr<ServedStudy> study;
    std::unique_lock<std::mutex> lock;
    explicit operator bool() const { return study != nullptr; }
    ServedStudy* operator->() const { return study.get(); }
    ServedStudy& operator*() const { return *study; }
  };
  // The caller holds no study lock.
  LockedStudy LockStudy(int64_t study_id);
  // The study of lease `lease_id` (a trial's or an evaluation's), 0 when no such lease is held.
  // Takes the table lock.
  int64_t StudyOfLease(const std::string& lease_id);
  // The study's dollars (the ledger's, under the table lock, which it takes).
  double StudyDollars(int64_t study_id, double now);
  // The lease as held by the worker (and the worker touched), under the table lock (it takes
  // it); the pointer stays valid while the caller holds the lease's study lock.
  // FAILED_PRECONDITION too when the lease is not `study`'s (the one the caller locked).
  // FAILED_PRECONDITION too for a lease being completed, unless `completing_ok`.
  Status CheckLease(const ServedStudy* study, const std::string& worker_id,
                    const std::string& lease_id, TrialLease** out, bool completing_ok = false);

  // Fences each write for a study leased here with the lease's epoch
  // (coordinator/store/fenced_store.h).
  std::unique_ptr<FencedStore> store_;
  // Every transaction goes through it. A study's writes are submitted under its lock, so they
  // commit in the order memory took them. A report applies to memory and queues its write with
  // a completion that answers it (nothing waits); an acquisition applies to memory and a
  // completion holds its lease while they wait for their commit with the study's lock let go;
  // the rarer writers (expiry, failure, pause, ...) wait under their study's lock (Run), which
  // is why the writer's completions never take a study's lock.
  std::unique_ptr<GroupCommit> commit_;
  // What a committed (or failed) report does under its study's lock before it is answered:
  // pruning the checkpoint it superseded, UndoReport. Not on the writer thread, which a Run
  // under a study's lock waits for.
  std::unique_ptr<TaskThread> after_commit_;
  CoordinatorOptions options_;
  StudyRegistry studies_;  // the studies served, each with its lock; their study leases
  // Guards the three below and costs_' tags (see "Locks"); checkpoints_ and costs_ take it
  // themselves where they read them.
  std::mutex table_mu_;
  WorkerTable workers_;  // registered workers: last heard from, refusals (core/worker_table.h)
  LeaseTable leases_;    // trial and evaluation leases: who holds what, heard from when
  Ledger ledger_;        // every dollar: segments, idle stretches, study totals
  // Resume points, fallbacks and retention in options_.checkpoint_dir (reads leases_).
  TrialCheckpoints checkpoints_;
  // Alerts, forecasts and quotas; holds the studies' tags (under table_mu_) and the alert
  // commands. Last: destroyed first, so it waits for commands still running while the rest is
  // intact.
  CostWatch costs_;
};

}  // namespace sift::coordinator

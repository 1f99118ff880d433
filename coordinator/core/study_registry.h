// The study registry: the studies this coordinator serves, each with its own lock, its
// StudyRunner and what the Coordinator keeps per study, and the cap on how many run at once.
// With a database shared by several coordinators (PostgreSQL) it also holds the study leases
// that say which coordinator serves which open study: a row in the database (Store::ClaimStudy)
// that its coordinator renews (coordinator/core/study_leases.cc takes a study over when its lease
// expired), and whose epoch fences every write for the study (coordinator/store/fenced_store.h).
//
// Thread-safe. Its own locks are leaves (coordinator.h, "Locks"): the map of studies is under a
// shared_mutex (lookups share it, Add and Remove take it alone), the study leases under a mutex,
// and neither is held while anything else is locked or waited for. A study found here is locked
// by the caller (ServedStudy::mu); one removed meanwhile says so (`dropped`).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/data/data_spec.h"
#include "coordinator/core/status.h"
#include "coordinator/core/study_runner.h"
#include "coordinator/store/fenced_store.h"
#include "coordinator/store/records.h"

namespace sift::coordinator {

// One study served here. Everything below `mu` is guarded by it, except the two counters, which
// are written under it and read without it (to skip a study that has nothing to give).
struct ServedStudy {
  explicit ServedStudy(std::unique_ptr<StudyRunner> r)
      : runner(std::move(r)), data_json(data::ToJson(runner->config().data)) {}
  int64_t id() const { return runner->id(); }

  std::mutex mu;
  std::unique_ptr<StudyRunner> runner;  // never null
  // The data spec as every assignment carries it: made once, not per acquisition.
  const std::string data_json;
  bool dropped = false;  // no longer served (another coordinator took it): let go of it
  // A new trial's write failed (set on the commit thread): the trials numbered after it were
  // decided on a view that held it, and storing one would leave a gap in the numbers. Cleared
  // once the study is reread from the Store (Acquisition::RereadStudy).
  std::atomic<bool> trial_write_failed{false};
  // The newest checkpoint of each trial: an epoch's, a spot notice's or a pause's.
  std::map<int64_t, std::string> resume;
  // Test evaluations by trial (coordinator/core/test_evaluations.cc), and how many are pending
  // (waiting for a worker) and open (pending or running).
  std::map<int64_t, EvaluationRecord> evaluations;
  std::atomic<int> pending_evaluations{0}, open_evaluations{0};
  // The alerts and forecasts recorded (their keys, from its events), and when its forecast was
  // last made for them, with how many trials had ended then.
  std::set<std::string> cost_events;
  double forecast_at = -1e300;
  int64_t forecast_ended = -1;
};

class StudyRegistry {
 public:
  using Studies = std::vector<std::shared_ptr<ServedStudy>>;
  // `lease_s` 0: no study leases, every study is served here (SQLite).
  StudyRegistry(FencedStore& store, int64_t max_running, double lease_s, std::string owner);

  // The study, or null when it is not served. Lock it, then check `dropped`.
  std::shared_ptr<ServedStudy> Find(int64_t id) const;
  void Add(std::shared_ptr<ServedStudy> study);
  // Stops serving the study (its study lease, if any, is forgotten, not released, and its
  // writes are refused from now on) and returns it (null when it was not served); the caller
  // marks it dropped under its lock.
  std::shared_ptr<ServedStudy> Remove(int64_t id);
  // Every study served, by id, as they are now.
  Studies All() const;
  // RESOURCE_EXHAUSTED when `max_running` studies are running. Locks each study in turn: the
  // caller holds no study lock.
  Status RunningCap() const;

  // Study leases; all true or no-ops when lease_s is 0.
  bool leased() const { return lease_s_ > 0; }
  // Renews the study's lease when it is held here (at the epoch it was taken at), else takes
  // it, for lease_s of the database's clock; false when another coordinator holds it or took
  // it over. The store fences the study's writes with the epoch held. Throws when the
  // database cannot be written.
  bool Claim(int64_t id, double now);
  // Whether renewals are due (every third of lease_s); when they are, the next is scheduled.
  bool RenewalDue(double now);
  // Until when the study's lease is held (0 when it is not), by this coordinator's clock: a
  // lease it could not renew is let go by then, though the database's fence alone decides.
  double HeldUntil(int64_t id) const;
  // Gives every study lease back (a clean shutdown: a standby takes the studies at once).
  void ReleaseAll();

 private:
  FencedStore& store_;
  const int64_t max_running_;
  const double lease_s_;
  const std::string owner_;
  mutable std::shared_mutex studies_mu_;
  std::map<int64_t, std::shared_ptr<ServedStudy>> studies_;
  mutable std::mutex leases_mu_;
  struct Held {
    double until;   // by this coordinator's clock
    int64_t epoch;  // the fencing token
  };
  std::map<int64_t, Held> held_;  // study leases held
  double next_renewal_ = 0;
};

}  // namespace sift::coordinator

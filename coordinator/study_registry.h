// The study registry: the studies this coordinator serves, one StudyRunner each, and the cap on
// how many run at once. With a database shared by several coordinators (PostgreSQL) it also
// holds the study leases that say which coordinator serves which open study: a row in the
// database (Store::ClaimStudy) that its coordinator renews (coordinator/study_leases.cc takes a
// study over when its lease expired). Not thread-safe: the caller locks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/status.h"
#include "coordinator/store.h"
#include "coordinator/study_runner.h"

namespace sift::coordinator {

class StudyRegistry {
 public:
  using Runners = std::map<int64_t, std::unique_ptr<StudyRunner>>;

  // `lease_s` 0: no study leases, every study is served here (SQLite).
  StudyRegistry(Store& store, int64_t max_running, double lease_s, std::string owner);

  StudyRunner* Find(int64_t id) const;
  void Add(std::unique_ptr<StudyRunner> runner);
  // Stops serving the study (its study lease, if any, is forgotten, not released).
  void Remove(int64_t id);
  // Every study served, by id.
  const Runners& all() const { return runners_; }

  // RESOURCE_EXHAUSTED when `max_running` studies are running.
  Status RunningCap() const;

  // Study leases; all true or no-ops when lease_s is 0.
  bool leased() const { return lease_s_ > 0; }
  // Takes or renews the study's lease until now + lease_s; false when another coordinator holds
  // it. Throws when the database cannot be written.
  bool Claim(int64_t id, double now);
  // Whether renewals are due (every third of lease_s); when they are, the next is scheduled.
  bool RenewalDue(double now);
  // Until when the study's lease is held (0 when it is not).
  double HeldUntil(int64_t id) const;
  // Gives every study lease back (a clean shutdown: a standby takes the studies at once).
  void ReleaseAll();

 private:
  Store& store_;
  int64_t max_running_;
  double lease_s_;
  std::string owner_;
  Runners runners_;
  std::map<int64_t, double> lease_until_;  // study leases held: until when
  double next_renewal_ = 0;
};

}  // namespace sift::coordinator

// The lease table: which worker holds which trial (a trial lease) or which trial's test score (an
// evaluation lease), when each was last heard from, and what a trial lease's newest report was
// answered (so that a retry is answered from memory). A lease is granted once its segment is in
// the Store and ended once the Store closed it; what the lease costs is the ledger's
// (coordinator/cost/ledger.h). Not thread-safe: the caller locks.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "coordinator/core/status.h"
#include "search/decision.h"

namespace sift::coordinator {

struct TrialLease {
  std::string id, worker_id;
  int64_t study_id = 0, number = 0;
  double last_seen = 0;
  bool study_paused = false;  // told to hand back because its study was paused
  // Its newest report, so that a retry is answered from memory (the report path reads nothing
  // from the Store): its seq, decision and commit. Not known for a lease restored from the
  // Store, or one whose newest report failed to commit; then the Store is asked.
  bool has_report = false;
  int64_t last_seq = 0;
  search::Decision last_decision{};
  std::shared_future<void> last_commit{};
  bool reports_known = true;
  // Its completion's commit while in flight (CompleteTrial lets the study's lock go meanwhile):
  // nothing else ends the lease, and a retried completion waits for the same commit. Set and
  // cleared under the study's lock and the table lock both.
  std::shared_future<void> completing{};
};

// A worker scoring a trial's checkpoint on the test split. Kept apart from trial leases: it
// trains nothing, reports nothing and is charged to no trial.
struct EvaluationLease {
  std::string id, worker_id;
  int64_t study_id = 0, number = 0;
  double last_seen = 0;
};

class LeaseTable {
 public:
  // Trial leases.
  void Grant(const TrialLease& lease);
  TrialLease* Find(const std::string& id);
  // Lease `id` as held by `worker_id`: FAILED_PRECONDITION when it is not held (expired, ended,
  // never granted) or is another worker's.
  Status Held(const std::string& worker_id, const std::string& id, TrialLease** out);
  void End(const std::string& id);
  // A study's leases: their ids, the trials they hold, whether it has any.
  std::vector<std::string> OfStudy(int64_t study_id) const;
  std::set<int64_t> TrialsOf(int64_t study_id) const;
  bool AnyOf(int64_t study_id) const;
  // Ends a study's leases in memory (another coordinator serves it now).
  void DropStudy(int64_t study_id);
  // Trial leases silent for more than `timeout_s` at `now`, in id order.
  std::vector<std::string> Expired(double now, double timeout_s) const;
  size_t size() const { return trials_.size(); }

  // Evaluation leases.
  void GrantEvaluation(const EvaluationLease& lease);
  EvaluationLease* FindEvaluation(const std::string& id);
  void EndEvaluation(const std::string& id);
  std::vector<std::string> ExpiredEvaluations(double now, double timeout_s) const;

  // A worker's heartbeat for `ids` (of either kind): its leases among them are alive at `now`;
  // returns the others, which it no longer holds.
  std::vector<std::string> Heartbeat(const std::string& worker_id,
                                     const std::vector<std::string>& ids, double now);
  // The workers holding a lease of either kind.
  std::set<std::string> Holders() const;

 private:
  std::map<std::string, TrialLease> trials_;
  std::map<int64_t, std::set<std::string>> by_study_;  // trial lease ids per study
  std::map<std::string, EvaluationLease> evaluations_;
};

}  // namespace sift::coordinator

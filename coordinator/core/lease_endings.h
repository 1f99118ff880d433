// How a trial lease ends (complete, fail, preempt, hand back, expiry; heartbeats keep it): each
// closes its segment in the Store, then the ledger charges the trial once. Apart from the
// Coordinator so that it reads and is tested alone; each method says which locks it expects.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/core/coordinator_state.h"

namespace sift::coordinator {

class LeaseEndings {
 public:
  // What a lease's end asks of the study-level steps the Coordinator keeps. Each is called
  // with the study's lock held and the table lock not.
  class Hooks {
   public:
    // A completion, failure or hand-back of evaluation lease `lease_id` of `study` (or null);
    // nullopt when lease_id is not an evaluation lease.
    virtual std::optional<Status> EndEvaluationLease(ServedStudy* study,
                                                     const std::string& worker_id,
                                                     const std::string& lease_id,
                                                     EvaluationState state,
                                                     const std::map<std::string, double>& metrics,
                                                     const std::string& error, bool cannot_run) = 0;
    // Ends the study once it has nothing left to run.
    virtual void MaybeFinishStudy(ServedStudy& study, double now) = 0;
    // Ends the study FAILED when every live worker refused it.
    virtual void MaybeFailUnrunnable(ServedStudy& study, const std::string& why, double now) = 0;

   protected:
    ~Hooks() = default;
  };

  LeaseEndings(CoordinatorState& state, Hooks& hooks) : state_(state), hooks_(hooks) {}

  // The worker's calls (Coordinator's of the same names). Each takes its lease's study lock and,
  // briefly, the table lock: the caller holds neither. A completion commits with the study's
  // lock let go; the others wait for their commit under it.
  Status CompleteTrial(const std::string& worker_id, const std::string& lease_id,
                       const std::map<std::string, double>& final_metrics,
                       const std::string& checkpoint);
  Status FailTrial(const std::string& worker_id, const std::string& lease_id,
                   const std::string& error, bool worker_cannot_run);
  Status PreemptTrial(const std::string& worker_id, const std::string& lease_id,
                      const std::string& checkpoint, const std::string& reason);
  // Takes the table lock only.
  Status Heartbeat(const std::string& worker_id, const std::vector<std::string>& lease_ids,
                   std::vector<std::string>* revoked);
  // Requeues the trials whose leases went silent for the lease timeout, each billed to its
  // worker's last sign of life. Takes each study's lock in turn: the caller holds none.
  void ExpireLeases(double now);
  // A lease's trial goes back to PENDING (segment `reason`, `wasted` seconds); Store first. The
  // caller holds the study's lock, not the table lock.
  Status EndLeaseAndRequeue(ServedStudy& study, const std::string& lease_id, double end,
                            const std::string& reason, const std::string& checkpoint,
                            double wasted);
  // Ends a lease of `study`: closes its segment and charges the trial. The Store write is the
  // caller's. The caller holds the study's lock, not the table lock.
  void ApplyLeaseEnd(ServedStudy& study, const std::string& lease_id, double end);

 private:
  CoordinatorState& state_;
  Hooks& hooks_;
};

}  // namespace sift::coordinator

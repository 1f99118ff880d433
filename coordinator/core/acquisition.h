// Handing out work: registration, then AcquireTrial (a test evaluation first, else a study's next
// trial under a lease its worker hears of once committed). Apart from the Coordinator so that it
// reads and is tested alone; each method says which locks it expects (coordinator.h, "Locks").
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/core/coordinator_state.h"
#include "search/param_value.h"

namespace sift::coordinator {

struct Assignment {
  int64_t study_id = 0;
  int64_t number = 0;
  std::string lease_id;
  search::Params params;  // searched and fixed trainer parameters together
  int64_t max_epochs = 0;
  int64_t start_epoch = 0;  // epochs already reported; resume_checkpoint may be older
  uint64_t seed = 0;
  data::DataSpec data;
  std::string data_json;  // `data` as data::ToJson writes it
  std::string metric;
  std::string checkpoint_dir;     // set when workers share the coordinator's checkpoint directory
  std::string resume_checkpoint;  // the file to resume from; "" = start fresh
  std::vector<std::string> resume_fallbacks;  // older ones still held, newest first
  int64_t checkpoint_every_epochs = 1;
  common::TrialConfig trial;  // a command trial's program; empty command: the built-in trainer
  // A test evaluation, not training: score resume_checkpoint on the test split and complete.
  bool evaluate_test = false;
};

enum class AcquireResult { kAssigned, kNoWork, kShutdown };

class Acquisition {
 public:
  // What handing out work asks of the study-level steps the Coordinator keeps.
  class Hooks {
   public:
    // Leases a pending evaluation of some study to worker `worker_id` (`w`: a copy); false when
    // there is none it can run. Takes each study's lock in turn: the caller holds none.
    virtual bool AssignEvaluation(const std::string& worker_id, const WorkerTable::Worker& w,
                                  double now, Assignment* out) = 0;
    virtual bool EvaluationsOpen() = 0;  // some evaluation is pending or running
    // Ends the study once it has nothing left to run. The caller holds the study's lock.
    virtual void MaybeFinishStudy(ServedStudy& study, double now) = 0;

   protected:
    ~Hooks() = default;
  };

  Acquisition(CoordinatorState& state, Hooks& hooks) : state_(state), hooks_(hooks) {}

  // Checks the worker's market and price (else the catalog's), stores it and adds it to the
  // worker table. Takes the table lock briefly, after the Store write.
  Status RegisterWorker(WorkerRecord request, WorkerRecord* out);
  // `idle_exit_s` > 0: answer kShutdown once the worker has found no work for that long. Takes
  // each study's lock in turn, those not busy first, and the table lock briefly: the caller
  // holds none. A lease's write commits with its study's lock let go.
  Status AcquireTrial(const std::string& worker_id, AcquireResult* result, Assignment* out,
                      double idle_exit_s);
  // Records the worker's idle stretch, if one is open, as ending at `end`. Takes the table lock
  // (the caller does not hold it) and writes the stretch to the Store after letting it go.
  void CloseIdle(const std::string& worker_id, double end, const char* reason);
  // Rebuilds the study's runner from the Store once every write queued before has landed (after
  // a failed write: memory had taken it). The caller holds the study's lock.
  void RereadStudy(ServedStudy& study);

 private:
  // AcquireTrial's work in one study (`lock` holds it): its next trial leased to the worker
  // (`w`: a copy), or the storage error that stopped it; nullopt when the study has none to
  // give (the lock still held). A lease's write commits with the lock let go.
  std::optional<Status> AssignTrial(const std::shared_ptr<ServedStudy>& study,
                                    std::unique_lock<std::mutex>& lock,
                                    const std::string& worker_id, const WorkerTable::Worker& w,
                                    double now, Assignment* out);
  // A lease whose write failed to commit: taken back (no time, no dollars) and the study reread.
  // The caller holds the study's lock.
  void UndoAssignment(ServedStudy& study, const std::string& lease_id);

  CoordinatorState& state_;
  Hooks& hooks_;
};

}  // namespace sift::coordinator

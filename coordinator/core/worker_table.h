// The workers registered with this coordinator: their records, when each was last heard from,
// the study each worked for last and the studies each refused. Apart from the Coordinator so
// that liveness and forgetting can be tested alone. Not locked itself: the Coordinator's table
// lock guards it, as it guards the LeaseTable and the Ledger (coordinator.h, "Locks").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/core/status.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/store/records.h"

namespace sift::coordinator {

class WorkerTable {
 public:
  struct Worker {
    WorkerRecord record;
    double last_seen = 0;
    int64_t last_study_id = 0;     // its idle time is reported with this study
    std::set<int64_t> cannot_run;  // studies it refused (worker_cannot_run)
  };

  // A worker silent for more than `timeout_s` is lost. Past `max_lost` lost workers the longest
  // silent are forgotten (ForgetLost), so that memory is bounded by the workers alive.
  explicit WorkerTable(double timeout_s, size_t max_lost = 1000)
      : timeout_s_(timeout_s), max_lost_(max_lost) {}

  // A worker registered now (replacing one of the same id), heard from at `now`.
  void Add(const WorkerRecord& record, double now);
  // A worker of a study taken over: kept as it is when already known here.
  void AddIfAbsent(const WorkerRecord& record, double now);
  // Finds a registered worker and notes that it is alive; NOT_FOUND names the unknown id.
  Status Touch(const std::string& worker_id, double now, Worker** out);
  const Worker* Find(const std::string& worker_id) const;
  // The worker now works for `study_id` (no-op for an unknown worker).
  void NoteStudy(const std::string& worker_id, int64_t study_id);
  // The worker cannot run `study_id`: it is offered none of its work again.
  void Refuse(const std::string& worker_id, int64_t study_id);

  bool Live(const Worker& w, double now) const { return now - w.last_seen <= timeout_s_; }
  // Until when the worker's open idle stretch counts: now if it is alive, else its last sign
  // of life. `now` for an unknown worker.
  double HeardUntil(const std::string& worker_id, double now) const;
  // Whether some live worker other than `except` has not refused `study_id`.
  bool SomeLiveCanRun(int64_t study_id, double now, const std::string& except = "") const;
  // The lost workers with an idle stretch still open in `ledger`: (id, when it ends).
  std::vector<std::pair<std::string, double>> LostIdle(const Ledger& ledger, double now) const;
  // Forgets the longest silent lost workers past max_lost; never one holding a lease
  // (`holding`) or idle in `ledger`. A forgotten worker stays in the database; if it comes
  // back, it is NOT_FOUND and registers anew, as sift-worker does. Returns how many went.
  size_t ForgetLost(const std::set<std::string>& holding, const Ledger& ledger, double now);

  size_t size() const { return workers_.size(); }

 private:
  double timeout_s_;
  size_t max_lost_;
  std::map<std::string, Worker> workers_;
};

}  // namespace sift::coordinator

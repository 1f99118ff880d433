// Plain records of what the Store holds. No behaviour here; the Store is the source of truth.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "search/param_value.h"
#include "search/study_view.h"

namespace sift::coordinator {

// kFailed: ended without a result (every trial failed, or no worker could run one).
// kPaused: stopped by a user or a signal with its work kept; `sift resume` (or re-running
// `sift run` on its directory) continues it. Open studies are the running and the paused ones.
enum class StudyState { kRunning, kCompleted, kCancelled, kFailed, kPaused };
inline bool IsOpen(StudyState s) { return s == StudyState::kRunning || s == StudyState::kPaused; }
const char* ToString(StudyState s);
StudyState StudyStateFromString(const std::string& s);
search::TrialState TrialStateFromString(const std::string& s);

struct StudyRecord {
  int64_t id = 0;
  std::string name;
  std::string config_text;
  StudyState state = StudyState::kRunning;
  std::string end_reason;
  double created_at = 0;  // unix seconds
  double ended_at = 0;
};

// One entry of a study's audit trail: who did what to it, and when (create, pause, resume,
// cancel, budget). `detail`: what changed (a budget's new values as JSON, the signal's name).
struct StudyEventRecord {
  int64_t study_id = 0;
  double at = 0;  // unix seconds
  std::string user;
  std::string action;
  std::string detail;
};

struct TrialRecord {
  int64_t study_id = 0;
  int64_t number = 0;
  search::Params params;  // searched parameters only; fixed ones come from the config
  search::TrialState state = search::TrialState::kPending;
  std::string end_reason;
  double created_at = 0;
  double ended_at = 0;
  std::map<std::string, double> final_metrics;
};

// The held-out test score of one trial, asked for once: the study's best trial when it finishes,
// or any finished trial on request. A worker scores the trial's checkpoint under a lease; a lost
// lease sends it back to pending.
enum class EvaluationState { kPending, kRunning, kDone, kFailed };
const char* ToString(EvaluationState s);
EvaluationState EvaluationStateFromString(const std::string& s);

struct EvaluationRecord {
  int64_t study_id = 0;
  int64_t number = 0;
  EvaluationState state = EvaluationState::kPending;
  std::string requested_by;  // "best trial" for the automatic one, else the caller
  double requested_at = 0;
  double ended_at = 0;
  std::map<std::string, double> metrics;  // test_*, set when done
  std::string error;                      // set when failed
};

struct ReportRecord {
  int64_t study_id = 0;
  int64_t number = 0;
  int64_t epoch = 0;
  std::map<std::string, double> metrics;
  std::string lease_id;
  int64_t seq = 0;
  std::string decision;  // CONTINUE | STOP | PAUSE
  std::string reason;
  double created_at = 0;
  std::string checkpoint;  // written for this epoch before the report; "" if none
};

// A population-based training exploit: from `epoch` on, trial `number` trains on from trial
// `from_trial`'s checkpoint at that epoch with `params_after` (the trial's params from then on);
// `params_before` are the ones its previous segment trained with. A trial's segments and lineage
// are its exploits in epoch order.
struct ExploitRecord {
  int64_t study_id = 0;
  int64_t number = 0;
  int64_t epoch = 0;
  int64_t from_trial = 0;
  search::Params params_before;
  search::Params params_after;
  std::string reason;
  double created_at = 0;
};

struct WorkerRecord {
  std::string id;
  std::string name;
  std::string instance_type;
  std::string market;  // on-demand | spot
  double price_per_hour = 0;
  std::string device;
  int64_t threads = 0;
  double registered_at = 0;
};

// A lease is one stretch of one worker on one trial: the unit the ledger (ledger.h) charges.
struct SegmentRecord {
  std::string lease_id;
  std::string worker_id;
  int64_t study_id = 0;
  int64_t number = 0;
  double start = 0;           // unix seconds, coordinator clock
  std::optional<double> end;  // open while the lease is held
  double price_per_hour = 0;
  std::string market;
  std::string end_reason;  // completed, stopped, paused, failed, expired, preempted
  int64_t start_epoch = 0;
  std::string checkpoint;     // preempted: the checkpoint it left behind
  double wasted_seconds = 0;  // work lost: from the last checkpoint to the interruption
  // Priced by the ledger (coordinator/ledger.h): SegmentDollars, WastedDollars.
};

// A worker's billed time on no trial: from the first AcquireTrial that found no work until it
// got a lease, left (SHUTDOWN) or went silent. Charged to no trial; reported with the study
// whose trial the worker ran last (after_study_id 0: it had run none).
struct IdleSegmentRecord {
  std::string worker_id;
  int64_t after_study_id = 0;
  double start = 0;
  double end = 0;
  double price_per_hour = 0;
  std::string market;
  std::string end_reason;  // leased, shutdown, idle-exit, lost

  double Seconds() const { return end - start; }  // priced by the ledger: IdleDollars
};

}  // namespace sift::coordinator

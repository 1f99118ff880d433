// The ledger: the one source of every dollar. A segment is one worker's stretch on one trial (a
// lease), billed at the worker's $/h from its start to its end; a trial's cost is the sum of its
// segments, a study's the sum of its trials', and the work lost since a segment's last
// checkpoint is waste. An idle stretch is a worker's billed time on no trial, reported with the
// study it worked for last.
//
// Two halves: free functions that price the Store's rows (status, reports, forecasts read
// those), and the Ledger class, the coordinator's running totals (the budget and quota checks
// ask it at every report, so it never rereads the Store). Both price with DollarsFor() below, so
// the totals and the rows agree up to the order of summation. Not thread-safe: the caller locks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/records.h"

namespace sift::coordinator {

// The one price formula: `seconds` of a machine at `price_per_hour`.
inline double DollarsFor(double seconds, double price_per_hour) {
  return seconds * price_per_hour / 3600.0;
}

// A segment's seconds and dollars, an open one billed to `now`.
double SegmentSeconds(const SegmentRecord& seg, double now);
double SegmentDollars(const SegmentRecord& seg, double now);
// A segment's dollars up to `at` (0 when it started later): the spend curve and the forecast.
double SegmentDollarsBy(const SegmentRecord& seg, double at);
// What its lost work (and work redone after a fallback) cost.
double WastedDollars(const SegmentRecord& seg);
double IdleDollars(const IdleSegmentRecord& idle);
// The work lost when a segment ends at `end` without a new checkpoint since `checkpoint_at`.
inline double LostSeconds(double end, double checkpoint_at) {
  return end > checkpoint_at ? end - checkpoint_at : 0.0;
}

// What a segment ends with when the study was paused under it: not a preemption, not billed
// as one, and its trial resumes from the checkpoint it left.
inline constexpr const char* kStudyPausedSegment = "study paused";

// One trial's cost over its segments.
struct TrialCost {
  double dollars = 0, seconds = 0;
  double wasted_dollars = 0;  // work redone after preemptions and lost leases
  int64_t segments = 0, interruptions = 0;
};
// Every trial's cost, by trial number, over a study's segments (in the Store's order).
std::map<int64_t, TrialCost> TrialCosts(const std::vector<SegmentRecord>& segments, double now);

// A study's cost over its segments and closed idle stretches.
struct StudyCost {
  double dollars = 0, wasted_dollars = 0;
  double paused_wasted_dollars = 0;  // the part of wasted_dollars lost to study pauses
  std::map<std::string, double> dollars_by_market;
  int64_t preemptions = 0, expirations = 0;  // segment endings of each kind
  double idle_dollars = 0, idle_seconds = 0;
};
StudyCost StudyCostOf(const std::vector<SegmentRecord>& segments,
                      const std::vector<IdleSegmentRecord>& idle, double now);

class Ledger {
 public:
  // What closing a segment charges its trial.
  struct Charge {
    int64_t study_id = 0, number = 0;
    double dollars = 0, seconds = 0;
  };
  // An idle stretch still open.
  struct Idle {
    int64_t after_study_id = 0;
    double start = 0, price_per_hour = 0;
    std::string market;
  };

  // Loads a study's segments from the Store: closed ones summed, open ones billed on (their
  // last checkpoint: their start). Returns each trial's cost over its closed segments; an open
  // one is charged to its trial when it closes.
  std::map<int64_t, TrialCost> RestoreStudy(int64_t study_id,
                                            const std::vector<SegmentRecord>& segments, double now);
  // Forgets a study (another coordinator serves it now).
  void DropStudy(int64_t study_id);

  // A lease starts billing (seg.end unset).
  void Open(const SegmentRecord& seg);
  // Its start, or nullopt when it is not open (never opened, or closed).
  std::optional<double> Start(const std::string& lease_id) const;
  // The lease checkpointed at `at`: work before it is no longer at risk.
  void NoteCheckpoint(const std::string& lease_id, double at);
  // Seconds of work ending the segment at `end` would lose (0 when it is not open).
  double LostSecondsAt(const std::string& lease_id, double end) const;
  // Ends the segment at `end`: what it charges its trial; nullopt when it was not open.
  std::optional<Charge> Close(const std::string& lease_id, double end);
  // What closing it at `at` would charge, the segment left open; nullopt when it is not open.
  std::optional<Charge> ChargeAt(const std::string& lease_id, double at) const;

  // A study's dollars: its closed segments, and its open ones billed to `now`.
  double StudyDollars(int64_t study_id, double now) const;
  // Several studies' dollars together (a quota's tag).
  double StudiesDollars(const std::vector<int64_t>& study_ids, double now) const;

  // Idle stretches, one per worker at most. OpenIdle keeps an open one as it is.
  void OpenIdle(const std::string& worker_id, int64_t after_study_id, double start,
                double price_per_hour, const std::string& market);
  const Idle* IdleOf(const std::string& worker_id) const;
  // Ends the worker's idle stretch at `end`: the record to store, nullopt when none was open
  // or it lasted no time.
  std::optional<IdleSegmentRecord> CloseIdle(const std::string& worker_id, double end,
                                             const std::string& reason);
  void ForgetWorker(const std::string& worker_id) { idle_.erase(worker_id); }
  // The study's open idle stretches, each to `until(worker)` (now, or a lost worker's last
  // sign of life): seconds and dollars added to *seconds and *dollars.
  template <typename Until>
  void OpenIdleOf(int64_t study_id, Until until, double* seconds, double* dollars) const {
    for (const auto& [worker, idle] : idle_) {
      if (idle.after_study_id != study_id) continue;
      const double s = std::max(0.0, until(worker) - idle.start);
      *seconds += s;
      *dollars += DollarsFor(s, idle.price_per_hour);
    }
  }

 private:
  struct OpenSegment {
    int64_t study_id = 0, number = 0;
    double start = 0, price_per_hour = 0, checkpoint_at = 0;
  };
  struct Study {
    double closed = 0;                        // over closed segments
    std::map<std::string, OpenSegment> open;  // by lease id
  };
  OpenSegment* Find(const std::string& lease_id);
  const OpenSegment* Find(const std::string& lease_id) const;

  std::map<int64_t, Study> studies_;
  std::map<std::string, int64_t> study_of_lease_;  // open segments only
  std::map<std::string, Idle> idle_;               // by worker id
};

}  // namespace sift::coordinator

// What `sift status` and `sift report` print about a study and its trials (and what the Studies
// service returns): made from the study's runner (its state now), the Store's rows and the
// ledger's prices. Plain functions of their inputs; the Coordinator gathers the inputs under its
// lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/cost/forecast.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/store/records.h"

namespace sift::coordinator {

class StudyRunner;

struct StudySummary {
  StudyRecord record;
  std::string metric;
  bool maximize = true;
  int64_t max_trials = 0;
  int64_t total = 0, finished = 0, running = 0;
  std::map<std::string, int64_t> by_state;  // trials per state name (PENDING, RUNNING, ...)
  std::optional<int64_t> best_trial;
  double best_value = 0;
  double dollars = 0;
  double wasted_dollars = 0;         // over closed segments
  double paused_wasted_dollars = 0;  // the part of it lost to study pauses
  std::map<std::string, double> dollars_by_market;
  int64_t preemptions = 0, expirations = 0;   // lease endings of each kind
  double idle_dollars = 0, idle_seconds = 0;  // workers waiting after its trials, on no trial
  common::BudgetConfig budget;                // in force now (the config's, or as changed)
  std::vector<StudyEventRecord> events;       // the audit trail, oldest first
  common::Tags tags;                          // the config's cost allocation tags
  std::optional<double> target;               // the config's objective.target
  std::optional<Forecast> forecast;           // an open study's, once a trial has ended
  std::string checkpoint_dir;  // the coordinator's folder of this study's checkpoints, if any
  // Several objectives (in order, the first is `metric`; empty with one) and the constraints;
  // with several objectives, once a feasible trial has ended, the size of the Pareto set of the
  // ended feasible trials and its hypervolume, against the reference the reports use (10%
  // beyond each objective's worst value among those trials).
  std::vector<search::Objective> objectives;
  std::vector<search::Constraint> constraints;
  int64_t pareto_trials = 0;
  std::optional<double> hypervolume;
};

struct TrialSummary {
  TrialRecord record;
  std::vector<ReportRecord> reports;  // current curve, in epoch order
  double dollars = 0, seconds = 0;
  double wasted_dollars = 0;  // work redone after preemptions and lost leases
  int64_t segments = 0, interruptions = 0;
  std::optional<double> objective;  // last reported objective value
  int64_t epochs = 0;
  std::string checkpoint;  // its newest checkpoint: a resume point, or a finished trial's model
  // Its held-out test score, when one was asked for (the best trial's at the study's end).
  std::optional<EvaluationRecord> evaluation;
};

// A study's summary from its runner and its Store rows. `record`: as stored (its state and end
// reason are taken from the runner); `dollars`: the ledger's running total, open leases to now.
// The forecast and the idle stretches still open are the caller's to add.
StudySummary SummarizeStudy(const StudyRecord& record, const StudyRunner& runner,
                            std::vector<StudyEventRecord> events,
                            const std::vector<SegmentRecord>& segments,
                            const std::vector<IdleSegmentRecord>& idle, double dollars, double now);

// What the coordinator knows of a trial beyond its rows: its newest checkpoint and its test
// evaluation, if any.
struct TrialExtras {
  std::function<std::string(int64_t number)> checkpoint;
  std::function<std::optional<EvaluationRecord>(int64_t number)> evaluation;
};

// The summaries of `trials` (Store rows, any subset of the study's), each with its current curve
// (for each epoch the newest of `reports`) and its cost over `segments` to `now`.
std::vector<TrialSummary> SummarizeTrials(const StudyRunner& runner,
                                          const std::vector<TrialRecord>& trials,
                                          const std::vector<ReportRecord>& reports,
                                          const std::vector<SegmentRecord>& segments, double now,
                                          const TrialExtras& extras);

}  // namespace sift::coordinator

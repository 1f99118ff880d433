// The frontier over every objective of a study with several objectives or constraints (issue 26):
// each trial's objective and constraint values, whether it is feasible, the Pareto set among the
// feasible scored trials (search/multi's constrained order), and the hypervolume as the study
// spent dollars and wall time. A study with one objective and no constraint has none of this: its
// reports stay the cost/objective frontier of report.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/report/report.h"

namespace sift::coordinator {

// Whether the reports show the frontier over all objectives: several objectives, or constraints.
bool ShowsFrontier(const StudyReport& report);

// The objectives the report ranks by: the config's, else study.metric alone.
std::vector<search::Objective> ObjectivesOf(const StudyReport& report);

// The objective and constraint metrics that results.csv adds as columns: each once, without
// the study's metric and dollars, which have columns of their own.
std::vector<std::string> FrontierColumns(const StudyReport& report);

// The constraints whose metric is not also an objective: a table's extra columns (an objective's
// column already shows the value).
std::vector<size_t> ConstraintColumns(const StudyReport& report);

// A trial's value of `metric`: `dollars` is its cost from the ledger; any other metric is its
// last report's value, and `train_seconds`, when no report carries it, its measured seconds.
std::optional<double> TrialMetric(const TrialSummary& t, const std::string& metric);

// Whether every constraint holds for the trial at its last report (a constraint whose metric was
// never reported does not); each constraint's value goes to `values` and the broken ones, e.g.
// "inference_ms 3.1 > 2", to `broken`, when given.
bool Feasible(const StudyReport& report, const TrialSummary& t,
              std::vector<std::optional<double>>* values = nullptr, std::string* broken = nullptr);

struct FrontierTrial {
  int64_t trial = 0;
  std::vector<std::optional<double>> values;       // per objective, as reported (not oriented)
  std::vector<std::optional<double>> constraints;  // per constraint: its metric's value
  bool scored = false;    // not failed or diverged, and every objective value finite
  bool feasible = false;  // every constraint holds; a missing value breaks it
  bool on_pareto = false;
  std::string broken;  // the constraints it breaks, e.g. "inference_ms 3.1 > 2"
};

struct Frontier {
  std::vector<FrontierTrial> trials;  // in the report's trial order
  // The Pareto set: feasible scored trials nobody dominates, best first in the first objective.
  std::vector<int64_t> pareto;
  // The hypervolume's reference point in the objectives' own units (empty without a feasible
  // scored trial): each objective's worst value over the feasible scored trials, 10% of its range
  // beyond (search::ReferencePoint), so the extremes of the set have a volume too.
  std::vector<double> reference;
};
Frontier FrontierOf(const StudyReport& report);
// Where trial `number` is in frontier.trials (and in the report's trials).
size_t FrontierIndex(const Frontier& frontier, int64_t number);

// "Pareto set", "dominated", "infeasible (inference_ms 3.1 > 2)" or "not scored".
std::string Label(const FrontierTrial& t);

// The hypervolume of the feasible scored trials ended so far against the frontier's reference,
// each time it grew, in order of trial end: against cumulative dollars (every ended trial's) and
// wall time.
struct HypervolumeStep {
  double dollars = 0;
  double at = 0;  // the trial's ended_at (unix seconds)
  double hypervolume = 0;
  int64_t trial = 0;
};
std::vector<HypervolumeStep> HypervolumeCurve(const StudyReport& report, const Frontier& frontier);

// A value of `metric` for people: dollars as $0.012345, others with 6 significant digits.
std::string FormatObjectiveValue(const std::string& metric, double v);

// What `sift report` and the run's closing text add: the objectives and constraints, the Pareto
// set with its values, the infeasible trials and why, and the hypervolume.
std::string FormatFrontierSummary(const StudyReport& report);
// One row per trial: each objective's and constraint's value and its label.
std::string FormatFrontierTable(const StudyReport& report);

}  // namespace sift::coordinator

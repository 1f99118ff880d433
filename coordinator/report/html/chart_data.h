// The numbers behind the HTML report's charts that the text report does not already compute
// (the frontier and best-so-far come from report.h). Pure functions over a study's records, so
// each is unit-tested on hand-made inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/cost/forecast.h"  // Forecast, SpentAt
#include "coordinator/report/report.h"
#include "coordinator/report/report_cost.h"  // ForecastFinish

namespace sift::coordinator {

// How much of the objective's variance each parameter explains on its own: the trials' objective
// averaged per bin of the parameter (a categorical's values; a number's quantile bins, at most
// `max_bins`, each of about 5 trials or more), and the spread of those bin means as a share of the
// total: epsilon-squared, which subtracts what bins of pure noise would explain, clamped at 0. It
// ignores interactions (fANOVA's first-order terms without the forest). Highest first.
// Early stopping leaves trials at different epochs, and an epoch-1 value against an epoch-9 one
// measures the scheduler, not the parameter; so the objective is compared at one `epoch` (each
// trial's value there; 0: each trial's last value).
struct Importance {
  std::string param;
  double share = 0;  // in [0, 1]
  int bins = 0;
  int trials = 0;  // scored trials that have the parameter (and a value at the epoch)
};
std::vector<Importance> ParamImportance(const StudyReport& report, int64_t epoch = 0,
                                        int max_bins = 10);
// The epoch to compare at: the highest one that at least a quarter of the scored trials (and at
// least 8, or all where fewer) reported a finite objective at.
int64_t ImportanceEpoch(const StudyReport& report);

struct SpendPoint {
  double at;
  double dollars;
};
// Spend over time at `samples` evenly spaced instants from the first lease to the last end
// (open leases run to `now`).
std::vector<SpendPoint> SpendOverTime(const std::vector<SegmentRecord>& segments, double now,
                                      int samples = 120);

// The cumulative dollars at which the best-so-far first reached each of `levels` objective
// values evenly spaced from the first result to the best (and the report's target, if any).
struct LevelCost {
  double level;
  double dollars;
  int64_t trial;
  bool reached;
};
std::vector<LevelCost> DollarsToLevels(const StudyReport& report, int levels = 6);

// Where a trial's curve is marked: a scheduler's stop or pause, a promotion (a paused trial
// resumed), a preemption or lost lease, a resume after one. `epoch`: the last epoch it had.
struct CurveMarker {
  int64_t epoch;
  std::string kind;  // stop | pause | promote | preempt | lost | resume
  std::string reason;
};
std::vector<CurveMarker> TrialMarkers(const TrialSummary& trial,
                                      const std::vector<SegmentRecord>& segments);

// Which trials' curves a chart draws when there are more than `max_curves`: the frontier, the
// best and an even sample of the rest, so a 10,000-trial page stays light. Indices into trials.
std::vector<size_t> TrialsToDraw(const StudyReport& report, size_t max_curves);
// Which of `n` points a line keeps: all up to `max_points`, else the first, the last and an
// even stride between.
std::vector<size_t> Downsample(size_t n, size_t max_points);

}  // namespace sift::coordinator

// What finishing a study will cost, and when, from the trials so far: the mean dollars of an
// ended trial and the pace at which trials end, applied to the trials still to run and capped by
// the budget; and what reaching the objective's target will take. Pure: the same records and
// instant give the same forecast (the report recomputes old ones to compare with what happened).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/store/records.h"

namespace sift::coordinator {

// A trial as the forecast sees it.
struct ForecastTrial {
  double created_at = 0;
  std::optional<double> ended_at;  // set for a terminal trial
  std::optional<double> value;     // its objective when ranked (finite, not failed or diverged)
};

struct ForecastInput {
  double start = 0;  // the study's creation (unix seconds)
  common::BudgetConfig budget;
  bool maximize = true;
  std::optional<double> target;
  std::vector<ForecastTrial> trials;
};

// Reaching the target: when it was reached, or what one more trial's chance of reaching it is
// (a normal distribution fitted to the ended trials' scores) and what the expected number of
// trials until one does (1 / that chance) will cost and take.
struct TargetForecast {
  double target = 0;
  bool reached = false;
  bool estimable = false;       // not reached, and enough scored trials (kMinScored) to say
  double chance_per_trial = 0;  // in [0, 1]
  double chance_in_budget = 0;  // of some trial among those left reaching it
  double trials_needed = 0;     // expected more trials (+inf when the chance is 0)
  double dollars = 0;           // reached: spent by then; else expected total spend by then
  double at = 0;                // reached: when (unix seconds); else the expected time
};

struct Forecast {
  bool possible = false;  // false: no trial had ended by `at`
  double at = 0;
  double spent = 0;      // by `at`
  double dollars = 0;    // expected total at the finish
  double finish_at = 0;  // expected unix time of the finish
  int64_t trials_ended = 0, trials_left = 0;
  std::string limited_by;  // "" | "max_dollars" | "max_hours": the budget ends it first
  std::optional<TargetForecast> target;  // when the input has a target
};

inline constexpr int kMinScoredForTarget = 3;

Forecast MakeForecast(const ForecastInput& input, const std::vector<SegmentRecord>& segments,
                      double at);

// Dollars spent by `at` (unix seconds): every lease's time until then at its price.
double SpentAt(const std::vector<SegmentRecord>& segments, double at);

// "val_accuracy 0.9: 12% chance per trial, ..." (or "reached after $0.40").
std::string FormatTargetForecast(const TargetForecast& t, const std::string& metric, double at);
// One line for people: "forecast: $1.20 in total (12 trials left), done in about 3.1 h; ...".
std::string FormatForecast(const Forecast& f, const std::string& metric);

// The forecast as JSON (the alerts' facts, recorded forecasts), and back.
std::string ForecastToJson(const Forecast& f);
std::optional<Forecast> ForecastFromJson(const std::string& json);

}  // namespace sift::coordinator

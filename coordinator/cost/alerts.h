// Which cost alerts and recorded forecasts are due for a study: pure decisions over its spend,
// budget, forecast and what its audit trail already records. Each is a study event (action
// "alert" or "forecast", detail the facts as JSON with a "key"), so each fires once per study,
// across coordinator restarts too: the coordinator checks the recorded keys before firing.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/cost/forecast.h"
#include "coordinator/store/records.h"

namespace sift::coordinator {

struct CostEvent {
  std::string action;   // the study event's: "alert" or "forecast"
  std::string key;      // once per study: "budget:80", "forecast:over-budget", "forecast:25"
  std::string kind;     // budget | forecast | recorded-forecast
  double percent = 0;   // the threshold (budget) or progress (recorded-forecast) it marks
  std::string message;  // for people: the log line, status history, the chat message
  std::optional<Forecast> forecast;
};

// The facts a command gets on stdin, and the event records as its detail.
struct CostFacts {
  int64_t study_id = 0;
  std::string study_name;
  common::Tags tags;
  double at = 0;
  double spent = 0;
  common::BudgetConfig budget;
};

// The progress points (percent of the dollar budget, or of max_trials ended without one) at
// which the forecast of the moment is recorded, for the report to compare with the outcome.
inline constexpr int kRecordedForecastPercents[] = {25, 50};
// The forecast alert needs this many ended trials: one trial's cost says little.
inline constexpr int64_t kMinEndedForForecastAlert = 2;

std::set<std::string> RecordedCostKeys(const std::vector<StudyEventRecord>& events);

// Thresholds of `alerts` that `spent` has reached of `max_dollars` and that are not recorded,
// lowest first (several at once after a restart or a lowered budget: each fires once).
std::vector<CostEvent> DueBudgetAlerts(const common::AlertConfig& alerts, double spent,
                                       double max_dollars, const std::set<std::string>& recorded);

// The forecast alert, when `f` says the budget (dollars or hours) ends the study before its
// trials are done and it has not fired yet.
std::optional<CostEvent> DueForecastAlert(const common::AlertConfig& alerts, const Forecast& f,
                                          const common::BudgetConfig& budget,
                                          const std::set<std::string>& recorded);

// The point (25 or 50) whose forecast is due at `progress` (in [0, 1]): the highest passed, when
// neither it nor a later one is recorded. A study that jumps past both (a lowered budget, a
// restart) records one forecast, at the progress it has, not two made at the same moment.
std::optional<int> DueForecastPoint(double progress, const std::set<std::string>& recorded);
// That forecast as an event (its percent: the actual progress); `f` must be possible.
std::optional<CostEvent> DueForecastRecord(double progress, const Forecast& f,
                                           const std::set<std::string>& recorded);

// How far along the study is, for the recorded forecasts: its dollars of max_dollars, else its
// ended trials of max_trials.
double StudyProgress(const common::BudgetConfig& budget, double spent, int64_t ended);

// The event's detail and the command's stdin: {"key", "kind", "message", "study": {...}, ...}.
std::string CostEventJson(const CostEvent& event, const CostFacts& facts);

// A recorded forecast read back from its event: (progress percent, the forecast then).
struct RecordedForecast {
  double percent = 0;
  Forecast forecast;
};
std::vector<RecordedForecast> RecordedForecasts(const std::vector<StudyEventRecord>& events);

// "alert: study 1 ... " for the status history: the message of an alert or forecast event.
std::string CostEventMessage(const StudyEventRecord& event);

}  // namespace sift::coordinator

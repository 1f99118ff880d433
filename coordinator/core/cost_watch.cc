// The Coordinator's cost alerts and recorded forecasts (coordinator/cost/alerts.h decides what
// is due; this records, logs and runs the commands), called at every Tick for open studies.
#include <spdlog/spdlog.h>

#include "coordinator/core/coordinator.h"
#include "coordinator/core/stored_study.h"

namespace sift::coordinator {

void Coordinator::FireCostEvent(ServedStudy& study, const CostEvent& event, double now) {
  const StudyRunner& runner = *study.runner;
  const common::StudyConfig& config = runner.config();
  CostFacts facts{runner.id(), config.name, config.tags, now, StudyDollars(runner.id(), now),
                  config.budget};
  const std::string detail = CostEventJson(event, facts);
  try {
    store_->InsertStudyEvent({runner.id(), now, "coordinator", event.action, detail});
  } catch (const std::exception& e) {
    StorageError(e, "a cost alert");  // not recorded: the next tick tries again
    return;
  }
  study.cost_events.insert(event.key);
  if (event.action != "alert") {
    spdlog::info("[study {}] {}", runner.id(), event.message);
    return;
  }
  spdlog::warn("[study {}] ALERT {}", runner.id(), event.message);
  if (!config.alerts.command.empty()) {
    alert_commands_.Run(config.alerts.command, detail + "\n", config.alerts.timeout_seconds,
                        "study " + std::to_string(runner.id()) + " " + event.key);
  }
}

void Coordinator::FireBudgetAlerts(ServedStudy& study, double spent, double now) {
  const common::StudyConfig& config = study.runner->config();
  for (const auto& e :
       DueBudgetAlerts(config.alerts, spent, config.budget.max_dollars, study.cost_events)) {
    FireCostEvent(study, e, now);
  }
}

void Coordinator::WatchCosts(ServedStudy& study, double now) {
  const StudyRunner& runner = *study.runner;
  const int64_t id = runner.id();
  const common::StudyConfig& config = runner.config();
  const std::set<std::string>& recorded = study.cost_events;
  const double spent = StudyDollars(id, now);
  FireBudgetAlerts(study, spent, now);
  // The forecast reads the Store (every trial and lease, under the lock): it is made only when a
  // trial has ended since the last one (nothing else changes it much), at most every
  // forecast_interval_s, and only while something it decides is still to come.
  int64_t ended = 0;
  for (const auto& t : runner.view().trials) ended += search::IsTerminal(t.state);
  const bool alert_pending = config.alerts.forecast && !recorded.count("forecast:over-budget") &&
                             (config.budget.max_dollars > 0 || config.budget.max_hours > 0);
  const double progress = StudyProgress(config.budget, spent, ended);
  const bool record_pending = DueForecastPoint(progress, recorded).has_value();
  if (ended == 0 || (!alert_pending && !record_pending) ||
      ended == study.forecast_ended || now - study.forecast_at < options_.forecast_interval_s) {
    return;
  }
  study.forecast_at = now;
  study.forecast_ended = ended;
  Forecast f;
  try {
    f = ForecastOf(runner, store_->ListTrials(id), store_->ListSegments(id), now);
  } catch (const std::exception& e) {
    spdlog::warn("[study {}] cannot make its forecast: {}", id, e.what());
    return;
  }
  if (auto record = DueForecastRecord(progress, f, recorded)) FireCostEvent(study, *record, now);
  if (auto alert = DueForecastAlert(config.alerts, f, config.budget, study.cost_events)) {
    FireCostEvent(study, *alert, now);
  }
}

}  // namespace sift::coordinator

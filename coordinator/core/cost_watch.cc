#include "coordinator/core/cost_watch.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "coordinator/core/storage_error.h"
#include "coordinator/core/stored_study.h"
#include "coordinator/cost/forecast.h"

namespace sift::coordinator {

double CostWatch::StudyDollars(int64_t study_id, double now) {
  std::lock_guard<std::mutex> table(table_mu_);
  return ledger_.StudyDollars(study_id, now);
}

void CostWatch::FireCostEvent(ServedStudy& study, const CostEvent& event, double now) {
  const StudyRunner& runner = *study.runner;
  const common::StudyConfig& config = runner.config();
  CostFacts facts{runner.id(),  config.name, config.tags, now, StudyDollars(runner.id(), now),
                  config.budget};
  const std::string detail = CostEventJson(event, facts);
  try {
    store_.InsertStudyEvent({runner.id(), now, "coordinator", event.action, detail});
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

void CostWatch::FireBudgetAlerts(ServedStudy& study, double spent, double now) {
  const common::StudyConfig& config = study.runner->config();
  for (const auto& e :
       DueBudgetAlerts(config.alerts, spent, config.budget.max_dollars, study.cost_events)) {
    FireCostEvent(study, e, now);
  }
}

void CostWatch::Watch(ServedStudy& study, double now) {
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
  if (ended == 0 || (!alert_pending && !record_pending) || ended == study.forecast_ended ||
      now - study.forecast_at < forecast_interval_s_) {
    return;
  }
  study.forecast_at = now;
  study.forecast_ended = ended;
  Forecast f;
  try {
    f = ForecastOf(runner, store_.ListTrials(id), store_.ListSegments(id), now);
  } catch (const std::exception& e) {
    spdlog::warn("[study {}] cannot make its forecast: {}", id, e.what());
    return;
  }
  if (auto record = DueForecastRecord(progress, f, recorded)) FireCostEvent(study, *record, now);
  if (auto alert = DueForecastAlert(config.alerts, f, config.budget, study.cost_events)) {
    FireCostEvent(study, *alert, now);
  }
}

double CostWatch::TagDollars(const std::string& key, const std::string& value, double now) const {
  std::vector<int64_t> tagged;
  for (const auto& [id, tags] : tags_) {
    const auto it = tags.find(key);
    if (it != tags.end() && it->second == value) tagged.push_back(id);
  }
  return ledger_.StudiesDollars(tagged, now);
}

void CostWatch::UpdateQuotaUse(StudyRunner& runner, double now) {
  if (quotas_.empty()) return;
  std::vector<QuotaUse> uses;
  const common::Tags& tags = runner.config().tags;
  std::lock_guard<std::mutex> table(table_mu_);
  for (const auto& q : quotas_) {
    const auto it = tags.find(q.key);
    if (it == tags.end() || it->second != q.value) continue;
    uses.push_back({q.Name(), q.dollars, TagDollars(q.key, q.value, now)});
  }
  runner.SetQuotaUse(std::move(uses));  // (the runner is the caller's, under its study lock)
}

Status CostWatch::CheckQuotas(const common::Tags& tags, double now) {
  std::lock_guard<std::mutex> table(table_mu_);
  for (const auto& q : quotas_) {
    const auto it = tags.find(q.key);
    if (it == tags.end() || it->second != q.value) continue;
    const double spent = TagDollars(q.key, q.value, now);
    if (spent >= q.dollars) {
      return Status::Error(Status::Code::kResourceExhausted,
                           fmt::format("quota {}: ${:.4f} spent of ${:.4f} by the studies tagged "
                                       "so; raise --quota or tag the study otherwise",
                                       q.Name(), spent, q.dollars));
    }
  }
  return Status::Ok();
}

}  // namespace sift::coordinator

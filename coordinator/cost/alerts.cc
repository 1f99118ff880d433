#include "coordinator/cost/alerts.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sift::coordinator {
namespace {

using json = nlohmann::json;

std::string Percent(double p) { return fmt::format("{:g}", p); }

bool IsCostEvent(const StudyEventRecord& e) {
  return e.action == "alert" || e.action == "forecast";
}

}  // namespace

std::set<std::string> RecordedCostKeys(const std::vector<StudyEventRecord>& events) {
  std::set<std::string> keys;
  for (const auto& e : events) {
    if (!IsCostEvent(e)) continue;
    const auto j = json::parse(e.detail, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("key") && j["key"].is_string()) {
      keys.insert(j["key"].get<std::string>());
    }
  }
  return keys;
}

std::vector<CostEvent> DueBudgetAlerts(const common::AlertConfig& alerts, double spent,
                                       double max_dollars, const std::set<std::string>& recorded) {
  std::vector<CostEvent> out;
  if (max_dollars <= 0) return out;
  for (double pct : alerts.thresholds) {
    const std::string key = "budget:" + Percent(pct);
    if (recorded.count(key) || spent < max_dollars * pct / 100.0) continue;
    CostEvent e;
    e.action = "alert";
    e.key = key;
    e.kind = "budget";
    e.percent = pct;
    e.message = fmt::format("{}% of the budget spent: ${:.4f} of ${:.4f}", Percent(pct), spent,
                            max_dollars);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<CostEvent> DueForecastAlert(const common::AlertConfig& alerts, const Forecast& f,
                                          const common::BudgetConfig& budget,
                                          const std::set<std::string>& recorded) {
  const std::string key = "forecast:over-budget";
  if (!alerts.forecast || recorded.count(key) || !f.possible || f.limited_by.empty() ||
      f.trials_ended < kMinEndedForForecastAlert) {
    return std::nullopt;
  }
  CostEvent e;
  e.action = "alert";
  e.key = key;
  e.kind = "forecast";
  e.forecast = f;
  e.message = f.limited_by == "max_dollars"
                  ? fmt::format(
                        "forecast: the ${:.4f} budget runs out before the study "
                        "finishes ({} of its trials left; ${:.4f} spent after {} ended)",
                        budget.max_dollars, f.trials_left, f.spent, f.trials_ended)
                  : fmt::format(
                        "forecast: the {:g} h budget runs out before the study "
                        "finishes ({} of its trials left after {} ended)",
                        budget.max_hours, f.trials_left, f.trials_ended);
  return e;
}

std::optional<int> DueForecastPoint(double progress, const std::set<std::string>& recorded) {
  std::optional<int> due;
  for (int pct : kRecordedForecastPercents) {
    if (progress * 100 >= pct) due = pct;
  }
  if (!due) return std::nullopt;
  for (int pct : kRecordedForecastPercents) {
    if (pct >= *due && recorded.count("forecast:" + std::to_string(pct))) return std::nullopt;
  }
  return due;
}

std::optional<CostEvent> DueForecastRecord(double progress, const Forecast& f,
                                           const std::set<std::string>& recorded) {
  const auto point = DueForecastPoint(progress, recorded);
  if (!point || !f.possible) return std::nullopt;
  CostEvent e;
  e.action = "forecast";
  e.key = "forecast:" + std::to_string(*point);
  e.kind = "recorded-forecast";
  e.percent = 100 * progress;
  e.forecast = f;
  e.message = fmt::format("at {:.0f}% of the budget: ${:.4f} expected in total, {} trials left",
                          e.percent, f.dollars, f.trials_left);
  return e;
}

double StudyProgress(const common::BudgetConfig& budget, double spent, int64_t ended) {
  if (budget.max_dollars > 0) return spent / budget.max_dollars;
  if (budget.max_trials > 0) {
    return static_cast<double>(ended) / static_cast<double>(budget.max_trials);
  }
  return 0;
}

std::string CostEventJson(const CostEvent& event, const CostFacts& facts) {
  json j = {{"key", event.key},
            {"kind", event.kind},
            {"message", event.message},
            {"at", facts.at},
            {"study", {{"id", facts.study_id}, {"name", facts.study_name}, {"tags", facts.tags}}},
            {"spent_dollars", facts.spent},
            {"budget",
             {{"max_dollars", facts.budget.max_dollars},
              {"max_hours", facts.budget.max_hours},
              {"max_trials", facts.budget.max_trials}}}};
  if (event.kind == "budget") {
    j["threshold_percent"] = event.percent;
    j["percent_spent"] =
        facts.budget.max_dollars > 0 ? 100 * facts.spent / facts.budget.max_dollars : 0.0;
  }
  if (event.kind == "recorded-forecast") j["progress_percent"] = event.percent;
  if (event.forecast) j["forecast"] = json::parse(ForecastToJson(*event.forecast));
  return j.dump();
}

std::vector<RecordedForecast> RecordedForecasts(const std::vector<StudyEventRecord>& events) {
  std::vector<RecordedForecast> out;
  for (const auto& e : events) {
    if (e.action != "forecast") continue;
    const auto j = json::parse(e.detail, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("forecast")) continue;
    auto f = ForecastFromJson(j["forecast"].dump());
    if (!f) continue;
    out.push_back({j.value("progress_percent", 0.0), *f});
  }
  return out;
}

std::string CostEventMessage(const StudyEventRecord& event) {
  if (!IsCostEvent(event)) return "";
  const auto j = json::parse(event.detail, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("message") || !j["message"].is_string()) return "";
  return j["message"].get<std::string>();
}

}  // namespace sift::coordinator

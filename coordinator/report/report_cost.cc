#include "coordinator/report/report_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/config/config_cost.h"
#include "common/metric_json.h"
#include "coordinator/cost/alerts.h"

namespace sift::coordinator {
namespace {

std::string Elapsed(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.2f} h", seconds / 3600);
}

// How far a forecast was off, in words: "forecast 16% low" (a sign alone read backwards).
std::string ForecastOff(double forecast, double actual, const char* under, const char* over) {
  if (!(actual > 0)) return "-";
  const double percent = 100 * (forecast - actual) / actual;
  if (std::abs(percent) < 0.5) return "forecast on the mark";
  return fmt::format("forecast {:.0f}% {}", std::abs(percent), percent < 0 ? under : over);
}

}  // namespace

std::string FormatTags(const common::Tags& tags) {
  std::string out;
  for (const auto& [k, v] : tags) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out.empty() ? "" : "tags: " + out;
}

std::vector<std::string> ForecastVersusActual(const StudySummary& s) {
  std::vector<std::string> out;
  const double start = s.record.created_at, end = s.record.ended_at;
  for (const auto& r : RecordedForecasts(s.events)) {
    const Forecast& f = r.forecast;
    std::string line = fmt::format(
        "forecast at {:.0f}% ({} trials ended, ${:.4f} spent): ${:.4f} in total, done after {}",
        r.percent, f.trials_ended, f.spent, f.dollars, Elapsed(f.finish_at - start));
    if (!IsOpen(s.record.state) && end > start) {
      line += fmt::format("; actual ${:.4f} ({}), after {} ({})", s.dollars,
                          ForecastOff(f.dollars, s.dollars, "low", "high"), Elapsed(end - start),
                          ForecastOff(f.finish_at - start, end - start, "early", "late"));
    }
    out.push_back(line);
  }
  return out;
}

std::string FormatCostSummary(const StudyReport& report) {
  const StudySummary& s = report.study;
  std::string out;
  if (std::string tags = FormatTags(s.tags); !tags.empty()) out += tags + "\n";
  if (IsOpen(s.record.state)) {
    if (s.forecast) out += FormatForecast(*s.forecast, s.metric) + "\n";
    return out;
  }
  for (const auto& line : ForecastVersusActual(s)) out += line + "\n";
  return out;
}

std::string ParseByTag(const std::string& by, std::string* key) {
  if (by == "tag") {
    key->clear();
    return "";
  }
  if (by.rfind("tag:", 0) == 0) {
    *key = by.substr(4);
    if (std::string p = common::CheckTagKey(*key); !p.empty()) return "--by " + by + ": " + p;
    return "";
  }
  return "--by: must be tag (every tag) or tag:KEY (one tag key), got '" + by + "'";
}

std::vector<TagRollup> RollUpByTag(const std::vector<StudySummary>& studies,
                                   const std::string& key) {
  std::map<std::pair<std::string, std::string>, TagRollup> rows;
  const auto add = [&](const std::string& k, const std::string& v, const StudySummary& s) {
    TagRollup& r = rows[{k, v}];
    r.key = k;
    r.value = v;
    ++r.studies;
    r.trials += s.total;
    r.dollars += s.dollars;
    if (!s.best_trial) return;
    auto [it, fresh] = r.best.try_emplace(s.metric);
    TagRollup::Best& b = it->second;
    if (fresh || (s.maximize ? s.best_value > b.value : s.best_value < b.value)) {
      b = {s.best_value, s.maximize, s.record.id, *s.best_trial};
    }
  };
  for (const auto& s : studies) {
    if (key.empty()) {
      if (s.tags.empty()) add("", "(untagged)", s);
      for (const auto& [k, v] : s.tags) add(k, v, s);
    } else {
      const auto it = s.tags.find(key);
      add(key, it == s.tags.end() ? "(no " + key + " tag)" : it->second, s);
    }
  }
  std::vector<TagRollup> out;
  for (auto& [k, r] : rows) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.dollars > b.dollars;
  });
  return out;
}

std::string FormatTagRollup(const std::vector<TagRollup>& rows,
                            const std::vector<StudySummary>& studies) {
  std::string out = fmt::format("{:<32}  {:>7}  {:>7}  {:>12}  {}\n", "tag", "studies", "trials",
                                "dollars", "best result (study#trial)");
  for (const auto& r : rows) {
    std::string best;
    for (const auto& [metric, b] : r.best) {
      best += fmt::format("{}{} {} (#{}#{})", best.empty() ? "" : "; ", metric,
                          common::FormatMetric(b.value, 4), b.study, b.trial);
    }
    const std::string tag = r.key.empty() ? r.value : r.key + "=" + r.value;
    out += fmt::format("{:<32}  {:>7}  {:>7}  {:>12.6f}  {}\n", tag, r.studies, r.trials, r.dollars,
                       best.empty() ? "-" : best);
  }
  int64_t trials = 0;
  double dollars = 0;
  for (const auto& s : studies) trials += s.total, dollars += s.dollars;
  out += fmt::format("{:<32}  {:>7}  {:>7}  {:>12.6f}  (each study once)\n", "total",
                     studies.size(), trials, dollars);
  return out;
}

std::string TagRollupJson(const std::vector<TagRollup>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json best = nlohmann::json::object();
    for (const auto& [metric, b] : r.best) {
      best[metric] = {{"value", common::MetricToJson(b.value)},
                      {"maximize", b.maximize},
                      {"study", b.study},
                      {"trial", b.trial}};
    }
    j.push_back({{"key", r.key},
                 {"value", r.value},
                 {"studies", r.studies},
                 {"trials", r.trials},
                 {"dollars", r.dollars},
                 {"best", best}});
  }
  return j.dump(2) + "\n";
}

ForecastInput ForecastInputOf(const StudyReport& report) {
  ForecastInput in;
  const StudySummary& s = report.study;
  in.start = s.record.created_at;
  in.budget = s.budget;
  in.maximize = s.maximize;
  in.target = report.target ? report.target : s.target;
  // Indexed by trial number, as the segments name them.
  for (const auto& t : report.trials) {
    const auto n = static_cast<size_t>(std::max<int64_t>(t.record.number, 0));
    if (in.trials.size() <= n) in.trials.resize(n + 1, ForecastTrial{1e300, {}, {}});
    ForecastTrial& ft = in.trials[n];
    ft.created_at = t.record.created_at;
    if (search::IsTerminal(t.record.state)) ft.ended_at = t.record.ended_at;
    if (Ranked(t)) ft.value = t.objective;
  }
  return in;
}

}  // namespace sift::coordinator

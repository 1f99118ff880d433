#include "coordinator/cost/forecast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "common/metric_json.h"
#include "coordinator/cost/ledger.h"

namespace sift::coordinator {
namespace {

bool Better(bool maximize, double a, double b) { return maximize ? a > b : a < b; }

// Reached already: the cumulative dollars of the ended trials (in order of ending) when the
// first one at or past the target ended, as the best-so-far curve counts them.
bool ReachedAt(const ForecastInput& in, const std::map<size_t, double>& dollars, double at,
               TargetForecast* t) {
  std::vector<size_t> ended;
  for (size_t i = 0; i < in.trials.size(); ++i) {
    if (in.trials[i].ended_at && *in.trials[i].ended_at <= at) ended.push_back(i);
  }
  std::stable_sort(ended.begin(), ended.end(), [&](size_t a, size_t b) {
    return *in.trials[a].ended_at < *in.trials[b].ended_at;
  });
  double cumulative = 0;
  for (size_t i : ended) {
    const auto it = dollars.find(i);
    cumulative += it == dollars.end() ? 0 : it->second;
    const auto& v = in.trials[i].value;
    if (v && !Better(in.maximize, t->target, *v)) {
      t->reached = true;
      t->dollars = cumulative;
      t->at = *in.trials[i].ended_at;
      return true;
    }
  }
  return false;
}

TargetForecast ForecastTarget(const ForecastInput& in, const std::map<size_t, double>& dollars,
                              const Forecast& f, double per_trial, double rate) {
  TargetForecast t;
  t.target = *in.target;
  if (ReachedAt(in, dollars, f.at, &t)) return t;
  std::vector<double> scores;
  for (const auto& trial : in.trials) {
    if (trial.ended_at && *trial.ended_at <= f.at && trial.value) scores.push_back(*trial.value);
  }
  if (static_cast<int>(scores.size()) < kMinScoredForTarget) return t;
  double mean = 0, var = 0;
  for (double v : scores) mean += v;
  mean /= static_cast<double>(scores.size());
  for (double v : scores) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(scores.size() - 1));
  t.estimable = true;
  // The chance that one more trial's score lands at or past the target (upper tail when
  // maximising). Identical scores leave no spread: a target past them is out of reach.
  const double z =
      sd > 0 ? (t.target - mean) / sd : (Better(in.maximize, t.target, mean) ? 1e9 : -1e9);
  t.chance_per_trial = 0.5 * std::erfc((in.maximize ? z : -z) / std::sqrt(2.0));
  const double left = static_cast<double>(std::max<int64_t>(f.trials_left, 0));
  t.chance_in_budget = 1.0 - std::pow(1.0 - t.chance_per_trial, left);
  if (t.chance_per_trial <= 1e-12) {
    t.trials_needed = std::numeric_limits<double>::infinity();
    t.dollars = std::numeric_limits<double>::infinity();
    t.at = std::numeric_limits<double>::infinity();
    return t;
  }
  t.trials_needed = 1.0 / t.chance_per_trial;
  t.dollars = f.spent + per_trial * t.trials_needed;
  t.at = f.at + t.trials_needed / rate;
  return t;
}

}  // namespace

double SpentAt(const std::vector<SegmentRecord>& segments, double at) {
  double dollars = 0;
  for (const auto& s : segments) dollars += SegmentDollarsBy(s, at);
  return dollars;
}

Forecast MakeForecast(const ForecastInput& in, const std::vector<SegmentRecord>& segments,
                      double at) {
  Forecast f;
  f.at = at;
  f.spent = SpentAt(segments, at);
  // Dollars by `at` per trial (by index: trial numbers are indices into in.trials).
  std::map<size_t, double> spent_by_trial;
  for (const auto& s : segments) {
    if (s.number >= 0) spent_by_trial[static_cast<size_t>(s.number)] += SegmentDollarsBy(s, at);
  }
  double ended_dollars = 0;
  int64_t created = 0;
  std::vector<double> running_spent;
  for (size_t i = 0; i < in.trials.size(); ++i) {
    const ForecastTrial& t = in.trials[i];
    if (t.created_at > at) continue;
    ++created;
    if (t.ended_at && *t.ended_at <= at) {
      ++f.trials_ended;
      ended_dollars += spent_by_trial[i];
    } else {
      running_spent.push_back(spent_by_trial[i]);
    }
  }
  if (f.trials_ended == 0) return f;
  f.possible = true;
  const double per_trial = ended_dollars / static_cast<double>(f.trials_ended);
  const int64_t max_trials = std::max<int64_t>(in.budget.max_trials, created);
  f.trials_left = max_trials - f.trials_ended;
  f.dollars = f.spent + per_trial * static_cast<double>(max_trials - created);
  for (double spent : running_spent) f.dollars += std::max(per_trial - spent, 0.0);
  const double rate = static_cast<double>(f.trials_ended) / std::max(at - in.start, 1e-9);
  f.finish_at = at + static_cast<double>(f.trials_left) / rate;
  const auto& budget = in.budget;
  if (budget.max_dollars > 0 && f.dollars > budget.max_dollars) {
    // Spending runs at the pace it has so far: the budget ends the study when it is spent.
    const double pace = f.spent / std::max(at - in.start, 1e-9);
    f.finish_at = pace > 0 ? at + std::max(budget.max_dollars - f.spent, 0.0) / pace : f.finish_at;
    f.dollars = std::max(budget.max_dollars, f.spent);
    f.limited_by = "max_dollars";
  }
  if (budget.max_hours > 0 && f.finish_at > in.start + budget.max_hours * 3600) {
    const double fraction = (in.start + budget.max_hours * 3600 - at) / (f.finish_at - at);
    f.dollars = f.spent + (f.dollars - f.spent) * std::max(fraction, 0.0);
    f.finish_at = std::max(in.start + budget.max_hours * 3600, at);
    f.limited_by = "max_hours";
  }
  if (in.target) f.target = ForecastTarget(in, spent_by_trial, f, per_trial, rate);
  return f;
}

namespace {

std::string Hours(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds < 120) return fmt::format("{:.0f} s", std::max(seconds, 0.0));
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

std::string FormatTargetForecast(const TargetForecast& t, const std::string& metric, double at) {
  std::string out = fmt::format("{} {}: ", metric, common::FormatMetric(t.target, 4));
  if (t.reached) return out + fmt::format("reached after ${:.4f}", t.dollars);
  if (!t.estimable) {
    return out + fmt::format("not reached; too few scored trials to estimate (< {})",
                             kMinScoredForTarget);
  }
  if (!std::isfinite(t.trials_needed)) return out + "out of reach of the scores so far";
  return out + fmt::format(
                   "{:.0f}% chance per trial, {:.0f}% within the budget; expected after "
                   "~{:.0f} more trials, ${:.4f} in total, in about {}",
                   100 * t.chance_per_trial, 100 * t.chance_in_budget, t.trials_needed, t.dollars,
                   Hours(t.at - at));
}

std::string FormatForecast(const Forecast& f, const std::string& metric) {
  if (!f.possible) return "forecast: none until a trial ends";
  std::string out = fmt::format("forecast: ${:.4f} in total ({} trials left), done in about {}",
                                f.dollars, f.trials_left, Hours(f.finish_at - f.at));
  if (!f.limited_by.empty()) out += "; the budget's " + f.limited_by + " ends it first";
  if (f.target) out += "; " + FormatTargetForecast(*f.target, metric, f.at);
  return out;
}

std::string ForecastToJson(const Forecast& f) {
  nlohmann::json j = {{"possible", f.possible},
                      {"at", f.at},
                      {"spent", f.spent},
                      {"dollars", f.dollars},
                      {"finish_at", f.finish_at},
                      {"trials_ended", f.trials_ended},
                      {"trials_left", f.trials_left},
                      {"limited_by", f.limited_by}};
  if (f.target) {
    const TargetForecast& t = *f.target;
    const auto finite = [](double v) -> nlohmann::json {
      return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    j["target"] = {{"target", t.target},
                   {"reached", t.reached},
                   {"estimable", t.estimable},
                   {"chance_per_trial", t.chance_per_trial},
                   {"chance_in_budget", t.chance_in_budget},
                   {"trials_needed", finite(t.trials_needed)},
                   {"dollars", finite(t.dollars)},
                   {"at", finite(t.at)}};
  }
  return j.dump();
}

std::optional<Forecast> ForecastFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("dollars") || !j["dollars"].is_number()) return std::nullopt;
  Forecast f;
  f.possible = j.value("possible", false);
  f.at = j.value("at", 0.0);
  f.spent = j.value("spent", 0.0);
  f.dollars = j.value("dollars", 0.0);
  f.finish_at = j.value("finish_at", 0.0);
  f.trials_ended = j.value("trials_ended", int64_t{0});
  f.trials_left = j.value("trials_left", int64_t{0});
  f.limited_by = j.value("limited_by", std::string());
  if (j.contains("target") && j["target"].is_object()) {
    const auto& jt = j["target"];
    TargetForecast t;
    const auto number = [&](const char* key) {
      return jt.contains(key) && jt[key].is_number() ? jt[key].get<double>()
                                                     : std::numeric_limits<double>::infinity();
    };
    t.target = number("target");
    t.reached = jt.value("reached", false);
    t.estimable = jt.value("estimable", false);
    t.chance_per_trial = number("chance_per_trial");
    t.chance_in_budget = number("chance_in_budget");
    t.trials_needed = number("trials_needed");
    t.dollars = number("dollars");
    t.at = number("at");
    f.target = t;
  }
  return f;
}

}  // namespace sift::coordinator

#include "coordinator/report/export_pick.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/text.h"
#include "coordinator/report/frontier.h"

namespace sift::coordinator {
namespace {

using common::Trim;

bool ValidMetricName(const std::string& m) {
  if (m.empty()) return false;
  for (char c : m) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  return true;
}

std::string Number(double v) {
  return std::fabs(v) >= 1e-3 || v == 0 ? fmt::format("{:.4f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

std::string ParsePick(const std::string& text, PickRule* out) {
  *out = PickRule();
  bool goal = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string clause = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (clause.empty()) {
      if (comma == text.size() && (goal || !out->bounds.empty())) break;  // a trailing comma
      return "--pick: an empty clause in '" + text + "'";
    }
    if (clause.rfind("min ", 0) == 0 || clause.rfind("max ", 0) == 0) {
      if (goal) return "--pick: '" + clause + "': a second min/max (give one goal)";
      goal = true;
      out->minimize = clause[1] == 'i';
      out->goal = Trim(clause.substr(4));
      if (!ValidMetricName(out->goal)) {
        return "--pick: '" + clause + "': no metric to " + clause.substr(0, 3);
      }
      if (comma == text.size()) break;
      continue;
    }
    const size_t ge = clause.find(">="), le = clause.find("<=");
    const size_t op = ge != std::string::npos ? ge : le;
    if (op == std::string::npos || (ge != std::string::npos && le != std::string::npos)) {
      return "--pick: '" + clause +
             "': expected METRIC>=VALUE, METRIC<=VALUE, min METRIC or "
             "max METRIC";
    }
    PickRule::Bound b;
    b.metric = Trim(clause.substr(0, op));
    b.at_least = op == ge;
    const std::string number = Trim(clause.substr(op + 2));
    char* end = nullptr;
    b.value = std::strtod(number.c_str(), &end);
    if (!ValidMetricName(b.metric)) return "--pick: '" + clause + "': no metric before the bound";
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(b.value)) {
      return "--pick: '" + clause + "': '" + number + "' is not a number";
    }
    out->bounds.push_back(b);
    if (comma == text.size()) break;
  }
  return "";
}

std::optional<double> PickMetric(const TrialSummary& t, const std::string& metric) {
  if (metric == "seconds") return t.seconds;
  if (metric == "epochs") return static_cast<double>(t.epochs);
  return TrialMetric(t, metric);
}

std::optional<int64_t> PickTrial(const StudyReport& report, const PickRule& rule,
                                 std::string* why) {
  const std::string goal = rule.goal.empty() ? report.study.metric : rule.goal;
  const bool minimize = rule.goal.empty() ? !report.study.maximize : rule.minimize;
  const TrialSummary* chosen = nullptr;
  double chosen_goal = 0;
  size_t with_model = 0;
  // Per bound: how many trials met it, and the value that came closest among the others.
  std::vector<std::optional<double>> closest(rule.bounds.size());
  std::vector<size_t> met(rule.bounds.size(), 0);
  // A study's constraints are part of every rule: a model that breaks one is not a candidate.
  const Frontier frontier = report.constraints.empty() ? Frontier() : FrontierOf(report);
  size_t infeasible = 0;
  for (size_t k = 0; k < report.trials.size(); ++k) {
    const TrialSummary& t = report.trials[k];
    if (!Ranked(t) || t.checkpoint.empty()) continue;
    if (!frontier.trials.empty() && !frontier.trials[k].feasible) {
      ++infeasible;
      continue;
    }
    ++with_model;
    bool ok = true;
    for (size_t i = 0; i < rule.bounds.size(); ++i) {
      const auto& b = rule.bounds[i];
      const auto v = PickMetric(t, b.metric);
      if (v && (b.at_least ? *v >= b.value : *v <= b.value)) {
        ++met[i];
        continue;
      }
      ok = false;
      if (v && (!closest[i] || (b.at_least ? *v > *closest[i] : *v < *closest[i]))) closest[i] = v;
    }
    const auto g = PickMetric(t, goal);
    if (!ok || !g) continue;
    const bool better =
        !chosen || (minimize ? *g < chosen_goal : *g > chosen_goal) ||
        (*g == chosen_goal && (report.study.maximize ? *t.objective > *chosen->objective
                                                     : *t.objective < *chosen->objective));
    if (better) {
      chosen = &t;
      chosen_goal = *g;
    }
  }
  if (chosen != nullptr) return chosen->record.number;
  const std::string skipped =
      infeasible == 0 ? ""
                      : fmt::format(" ({} with a model break the study's constraints)", infeasible);
  if (with_model == 0) {
    *why = "no scored trial that keeps the study's constraints has a model to export" + skipped;
    if (infeasible == 0) *why = "no scored trial has a model to export";
  } else {
    *why = "none of the " + std::to_string(with_model) + " trials with a model meets all of";
    for (size_t i = 0; i < rule.bounds.size(); ++i) {
      const auto& b = rule.bounds[i];
      *why += fmt::format("{} {}{}{}", i ? "," : "", b.metric,
                          b.at_least ? ">=" : "<=", Number(b.value));
      if (met[i] > 0) {
        *why += fmt::format(" ({} do)", met[i]);
      } else {
        *why += closest[i] ? " (none; closest " + Number(*closest[i]) + ")"
                           : std::string(" (no trial reports ") + b.metric + ")";
      }
    }
    if (rule.bounds.empty()) *why = "no trial with a model reports " + goal;
    *why += skipped;
  }
  return std::nullopt;
}

namespace {

// The Pareto set over every objective, one column each (frontier.h), best first in the first.
std::string FormatFrontierSet(const StudyReport& report) {
  const StudySummary& s = report.study;
  const auto objectives = ObjectivesOf(report);
  std::string names;
  for (const auto& o : objectives) {
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", o.metric,
                         o.maximize ? "maximize" : "minimize");
  }
  std::string out = fmt::format(
      "Pareto set of study {} '{}' over {}: feasible trials (early-stopped ones at their last "
      "reported value), best {} first\n",
      s.record.id, s.record.name, names, objectives[0].metric);
  out += fmt::format("{:>6}", "trial");
  for (const auto& o : objectives) out += fmt::format("  {:>14}", o.metric);
  out += fmt::format("  {:>6}  {:<10}  {}\n", "epochs", "state", "model");
  const Frontier frontier = FrontierOf(report);
  for (int64_t n : frontier.pareto) {
    const size_t at = FrontierIndex(frontier, n);
    const FrontierTrial& f = frontier.trials[at];
    const TrialSummary& t = report.trials[at];
    out += fmt::format("{:>6}", f.trial);
    for (size_t i = 0; i < objectives.size(); ++i) {
      out += fmt::format("  {:>14}", FormatObjectiveValue(objectives[i].metric, *f.values[i]));
    }
    out += fmt::format("  {:>6}  {:<10}  {}\n", t.epochs, search::ToString(t.record.state),
                       t.checkpoint.empty() ? "none" : "yes");
  }
  if (frontier.pareto.empty()) out += "(no feasible scored trial)\n";
  return out;
}

}  // namespace

std::string FormatParetoSet(const StudyReport& report) {
  if (ShowsFrontier(report)) return FormatFrontierSet(report);
  const StudySummary& s = report.study;
  std::string out = fmt::format(
      "Pareto set of study {} '{}': {} ({}) against dollars, {}, cheapest first\n", s.record.id,
      s.record.name, s.metric, s.maximize ? "maximize" : "minimize", Describe(FrontierOver::kAll));
  out += fmt::format("{:>6}  {:>12}  {:>12}  {:>6}  {:<10}  {}\n", "trial", s.metric, "dollars",
                     "epochs", "state", "model");
  for (int64_t n : ParetoFrontier(report, FrontierOver::kAll)) {
    const TrialSummary& t = report.trials[static_cast<size_t>(n)];
    out += fmt::format("{:>6}  {:>12}  {:>12.6f}  {:>6}  {:<10}  {}\n", n, Number(*t.objective),
                       t.dollars, t.epochs, search::ToString(t.record.state),
                       t.checkpoint.empty() ? "none" : "yes");
  }
  return out;
}

}  // namespace sift::coordinator

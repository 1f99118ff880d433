#include "coordinator/report/frontier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"
#include "search/multi/pareto.h"

namespace sift::coordinator {
namespace {

std::vector<search::Direction> Directions(const std::vector<search::Objective>& objectives) {
  std::vector<search::Direction> out;
  for (const auto& o : objectives) {
    out.push_back(o.maximize ? search::Direction::kMaximize : search::Direction::kMinimize);
  }
  return out;
}

std::vector<double> Raw(const FrontierTrial& t) {
  std::vector<double> out;
  for (const auto& v : t.values) out.push_back(*v);
  return out;
}

// Back from the oriented space (larger is better) to the objectives' own units.
std::vector<double> Unoriented(std::vector<double> v, const std::vector<search::Objective>& o) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = o[i].maximize ? v[i] : -v[i];
  return v;
}

}  // namespace

std::vector<search::Objective> ObjectivesOf(const StudyReport& report) {
  if (!report.objectives.empty()) return report.objectives;
  return {search::Objective{report.study.metric, report.study.maximize}};
}

std::vector<std::string> FrontierColumns(const StudyReport& report) {
  std::vector<std::string> out;
  if (!ShowsFrontier(report)) return out;
  auto add = [&](const std::string& m) {
    if (m == report.study.metric || m == "dollars") return;
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  for (const auto& o : report.objectives) add(o.metric);
  for (const auto& c : report.constraints) add(c.metric);
  return out;
}

std::vector<size_t> ConstraintColumns(const StudyReport& report) {
  const auto objectives = ObjectivesOf(report);
  std::vector<size_t> out;
  for (size_t i = 0; i < report.constraints.size(); ++i) {
    const auto& m = report.constraints[i].metric;
    if (std::none_of(objectives.begin(), objectives.end(),
                     [&](const search::Objective& o) { return o.metric == m; })) {
      out.push_back(i);
    }
  }
  return out;
}

bool ShowsFrontier(const StudyReport& report) {
  return report.objectives.size() > 1 || !report.constraints.empty();
}

std::optional<double> TrialMetric(const TrialSummary& t, const std::string& metric) {
  if (metric == "dollars") return t.dollars;
  for (auto r = t.reports.rbegin(); r != t.reports.rend(); ++r) {
    if (auto it = r->metrics.find(metric); it != r->metrics.end()) return it->second;
  }
  if (metric == "train_seconds") return t.seconds;
  return std::nullopt;
}

std::string FormatObjectiveValue(const std::string& metric, double v) {
  if (metric == "dollars" && std::isfinite(v)) return fmt::format("${:.6f}", v);
  return fmt::format("{:.6g}", v);
}

bool Feasible(const StudyReport& report, const TrialSummary& t,
              std::vector<std::optional<double>>* values, std::string* broken) {
  bool feasible = true;
  for (const auto& c : report.constraints) {
    const auto v = TrialMetric(t, c.metric);
    if (values) values->push_back(v);
    // Not reported: nothing shows the trial kept to the bound, so it does not count as held.
    if (v && c.Holds(*v)) continue;
    feasible = false;
    if (!broken) continue;
    *broken += (broken->empty() ? "" : ", ") + c.metric;
    *broken += v ? fmt::format(" {} {} {}", FormatObjectiveValue(c.metric, *v), c.upper ? ">" : "<",
                               FormatObjectiveValue(c.metric, c.bound))
                 : std::string(" not reported");
  }
  return feasible;
}

Frontier FrontierOf(const StudyReport& report) {
  const auto objectives = ObjectivesOf(report);
  const auto directions = Directions(objectives);
  Frontier out;
  // Feasible trials come before infeasible ones in the constrained order (objective_vectors.h),
  // so its first rank is the Pareto set of the feasible trials alone: ranked here by the plain
  // sort, whose two-objective path is O(n log n) where the constrained one compares every pair.
  search::Points feasible;
  std::vector<size_t> index;  // each feasible point's place in out.trials
  for (const auto& t : report.trials) {
    FrontierTrial f;
    f.trial = t.record.number;
    f.scored = t.record.state != search::TrialState::kFailed &&
               t.record.state != search::TrialState::kDiverged;
    for (const auto& o : objectives) {
      f.values.push_back(TrialMetric(t, o.metric));
      f.scored = f.scored && f.values.back() && std::isfinite(*f.values.back());
    }
    f.feasible = Feasible(report, t, &f.constraints, &f.broken);
    if (f.scored && f.feasible) {
      feasible.push_back(search::Oriented(Raw(f), directions));
      index.push_back(out.trials.size());
    }
    out.trials.push_back(std::move(f));
  }
  const std::vector<int> ranks = search::NonDominatedRanks(feasible);
  std::vector<size_t> on;  // places in out.trials
  for (size_t i = 0; i < feasible.size(); ++i) {
    if (ranks[i] != 0) continue;
    out.trials[index[i]].on_pareto = true;
    on.push_back(index[i]);
  }
  // Best first in the first objective; ties in trial order.
  std::stable_sort(on.begin(), on.end(), [&](size_t a, size_t b) {
    const double va = *out.trials[a].values[0], vb = *out.trials[b].values[0];
    return objectives[0].maximize ? va > vb : va < vb;
  });
  for (size_t i : on) out.pareto.push_back(out.trials[i].trial);
  if (!feasible.empty()) {
    out.reference = Unoriented(search::ReferencePoint(feasible, 0.1), objectives);
  }
  return out;
}

size_t FrontierIndex(const Frontier& frontier, int64_t number) {
  const auto it = std::find_if(frontier.trials.begin(), frontier.trials.end(),
                               [&](const FrontierTrial& t) { return t.trial == number; });
  return static_cast<size_t>(it - frontier.trials.begin());
}

std::string Label(const FrontierTrial& t) {
  if (!t.scored) return "not scored";
  if (!t.feasible) return "infeasible (" + t.broken + ")";
  return t.on_pareto ? "Pareto set" : "dominated";
}

std::vector<HypervolumeStep> HypervolumeCurve(const StudyReport& report, const Frontier& frontier) {
  std::vector<HypervolumeStep> out;
  if (frontier.reference.empty()) return out;
  const auto directions = Directions(ObjectivesOf(report));
  const std::vector<double> reference = search::Oriented(frontier.reference, directions);
  std::vector<size_t> ended;
  for (size_t i = 0; i < report.trials.size(); ++i) {
    if (search::IsTerminal(report.trials[i].record.state)) ended.push_back(i);
  }
  std::stable_sort(ended.begin(), ended.end(), [&](size_t a, size_t b) {
    return report.trials[a].record.ended_at < report.trials[b].record.ended_at;
  });
  // The non-dominated points so far: a dominated one adds no volume, so only these are kept.
  search::Points archive;
  double dollars = 0, volume = 0;
  for (size_t i : ended) {
    const TrialSummary& t = report.trials[i];
    const FrontierTrial& f = frontier.trials[i];
    dollars += t.dollars;
    if (!f.scored || !f.feasible) continue;
    const auto p = search::Oriented(Raw(f), directions);
    if (std::any_of(archive.begin(), archive.end(),
                    [&](const auto& a) { return a == p || search::Dominates(a, p); })) {
      continue;
    }
    archive.erase(std::remove_if(archive.begin(), archive.end(),
                                 [&](const auto& a) { return search::Dominates(p, a); }),
                  archive.end());
    archive.push_back(p);
    const double now = search::Hypervolume(archive, reference);
    if (now <= volume) continue;
    volume = now;
    out.push_back({dollars, t.record.ended_at, volume, t.record.number});
  }
  return out;
}

std::string FormatFrontierSummary(const StudyReport& report) {
  if (!ShowsFrontier(report)) return "";
  const auto objectives = ObjectivesOf(report);
  const Frontier frontier = FrontierOf(report);
  std::string names, constraints;
  for (const auto& o : objectives) {
    names +=
        fmt::format("{}{} ({})", names.empty() ? "" : ", ", o.metric, o.maximize ? "max" : "min");
  }
  for (const auto& c : report.constraints) {
    constraints += fmt::format("{}{} {} {}", constraints.empty() ? "" : ", ", c.metric,
                               c.upper ? "<=" : ">=", FormatObjectiveValue(c.metric, c.bound));
  }
  std::string out = fmt::format("Pareto set over {}, feasible trials only{}: ", names,
                                constraints.empty() ? "" : " (constraints: " + constraints + ")");
  if (frontier.pareto.empty()) out += "none";
  for (int64_t n : frontier.pareto) {
    const FrontierTrial& f = frontier.trials[FrontierIndex(frontier, n)];
    std::string values;
    for (size_t i = 0; i < objectives.size(); ++i) {
      values += fmt::format("{}{} {}", values.empty() ? "" : ", ", objectives[i].metric,
                            FormatObjectiveValue(objectives[i].metric, *f.values[i]));
    }
    out += fmt::format("{}#{} ({})", n == frontier.pareto.front() ? "" : "; ", n, values);
  }
  out += "\n";
  // The first few by name (the table above has every one), so the summary stays a summary.
  constexpr size_t kNamed = 8;
  std::string infeasible;
  size_t count = 0;
  for (const auto& f : frontier.trials) {
    if (!f.scored || f.feasible || ++count > kNamed) continue;
    infeasible += fmt::format("{}#{} ({})", infeasible.empty() ? "" : "; ", f.trial, f.broken);
  }
  if (count > kNamed) infeasible += fmt::format("; {} more", count - kNamed);
  if (count > 0) out += fmt::format("infeasible: {} trials: {}\n", count, infeasible);
  const auto curve = HypervolumeCurve(report, frontier);
  if (!curve.empty()) {
    std::string reference;
    for (size_t i = 0; i < objectives.size(); ++i) {
      reference += fmt::format("{}{} {}", reference.empty() ? "" : ", ", objectives[i].metric,
                               FormatObjectiveValue(objectives[i].metric, frontier.reference[i]));
    }
    out += fmt::format(
        "hypervolume {:.6g} after ${:.6f} (reference point {}: each objective's worst over "
        "feasible trials, 10% of its range beyond)\n",
        curve.back().hypervolume, curve.back().dollars, reference);
  }
  return out;
}

std::string FormatFrontierTable(const StudyReport& report) {
  if (!ShowsFrontier(report)) return "";
  const auto objectives = ObjectivesOf(report);
  const Frontier frontier = FrontierOf(report);
  std::string out = fmt::format("{:>5}", "trial");
  for (const auto& o : objectives) out += fmt::format("  {:>12}", o.metric);
  const auto columns = ConstraintColumns(report);
  for (size_t i : columns) out += fmt::format("  {:>12}", report.constraints[i].metric);
  out += "  frontier\n";
  for (const auto& f : frontier.trials) {
    out += fmt::format("{:>5}", f.trial);
    for (size_t i = 0; i < objectives.size(); ++i) {
      out += fmt::format(
          "  {:>12}", f.values[i] ? FormatObjectiveValue(objectives[i].metric, *f.values[i]) : "-");
    }
    for (size_t i : columns) {
      const auto& v = f.constraints[i];
      out +=
          fmt::format("  {:>12}", v ? FormatObjectiveValue(report.constraints[i].metric, *v) : "-");
    }
    out += "  " + Label(f) + "\n";
  }
  return out;
}

}  // namespace sift::coordinator

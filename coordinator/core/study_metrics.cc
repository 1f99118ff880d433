#include "coordinator/core/study_metrics.h"

#include <fmt/format.h>

#include <functional>

namespace sift::coordinator {
namespace {

const char* StateName(StudyState s) {
  switch (s) {
    case StudyState::kRunning:
      return "RUNNING";
    case StudyState::kCompleted:
      return "COMPLETED";
    case StudyState::kFailed:
      return "FAILED";
    case StudyState::kPaused:
      return "PAUSED";
    default:
      return "CANCELLED";
  }
}

// Every trial state, so a series exists (at 0) before the first trial reaches it.
constexpr const char* kTrialStates[] = {"PENDING", "RUNNING", "PAUSED",  "COMPLETED",
                                        "STOPPED", "FAILED",  "DIVERGED"};

}  // namespace

std::string PrometheusLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string StudyMetricsText(const std::vector<StudySummary>& studies) {
  std::string out;
  const auto family = [&](const char* name, const char* type, const char* help,
                          const std::function<double(const StudySummary&)>& value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    for (const auto& s : studies) {
      out += fmt::format("{}{{study=\"{}\",name=\"{}\"}} {}\n", name, s.record.id,
                         PrometheusLabel(s.record.name), value(s));
    }
  };
  out +=
      "# HELP sift_study_info A study's state (the value is always 1).\n"
      "# TYPE sift_study_info gauge\n";
  for (const auto& s : studies) {
    out += fmt::format("sift_study_info{{study=\"{}\",name=\"{}\",state=\"{}\",metric=\"{}\"}} 1\n",
                       s.record.id, PrometheusLabel(s.record.name), StateName(s.record.state),
                       PrometheusLabel(s.metric));
  }
  out +=
      "# HELP sift_study_trials Trials of a study by state.\n"
      "# TYPE sift_study_trials gauge\n";
  for (const auto& s : studies) {
    for (const char* state : kTrialStates) {
      const auto it = s.by_state.find(state);
      out += fmt::format("sift_study_trials{{study=\"{}\",name=\"{}\",state=\"{}\"}} {}\n",
                         s.record.id, PrometheusLabel(s.record.name), state,
                         it == s.by_state.end() ? 0 : it->second);
    }
  }
  family("sift_study_dollars", "gauge",
         "Dollars spent on the study's trials, open leases included.",
         [](const StudySummary& s) { return s.dollars; });
  family("sift_study_wasted_dollars", "gauge",
         "Dollars of work lost to preemptions and expired leases (redone).",
         [](const StudySummary& s) { return s.wasted_dollars; });
  family("sift_study_idle_dollars", "gauge", "Dollars of workers idle on the study.",
         [](const StudySummary& s) { return s.idle_dollars; });
  family("sift_study_max_dollars", "gauge", "The study's dollar budget (0: none).",
         [](const StudySummary& s) { return s.budget.max_dollars; });
  family("sift_study_preemptions_total", "counter", "Leases of the study ended by preemption.",
         [](const StudySummary& s) { return static_cast<double>(s.preemptions); });
  family("sift_study_expirations_total", "counter",
         "Leases of the study that expired (a worker gone without notice).",
         [](const StudySummary& s) { return static_cast<double>(s.expirations); });
  out +=
      "# HELP sift_study_best_objective The best objective value so far.\n"
      "# TYPE sift_study_best_objective gauge\n";
  for (const auto& s : studies) {
    if (!s.best_trial) continue;  // no sample rather than a made-up value
    out += fmt::format("sift_study_best_objective{{study=\"{}\",name=\"{}\"}} {}\n", s.record.id,
                       PrometheusLabel(s.record.name), s.best_value);
  }
  out +=
      "# HELP sift_study_hypervolume Several objectives: the hypervolume of the ended feasible "
      "trials' Pareto set (reference: 10% beyond each objective's worst among them).\n"
      "# TYPE sift_study_hypervolume gauge\n";
  for (const auto& s : studies) {
    if (!s.hypervolume) continue;
    out += fmt::format("sift_study_hypervolume{{study=\"{}\",name=\"{}\"}} {}\n", s.record.id,
                       PrometheusLabel(s.record.name), *s.hypervolume);
  }
  out +=
      "# HELP sift_study_pareto_trials Several objectives: trials in the Pareto set of the ended "
      "feasible trials.\n"
      "# TYPE sift_study_pareto_trials gauge\n";
  for (const auto& s : studies) {
    if (s.objectives.size() < 2) continue;
    out += fmt::format("sift_study_pareto_trials{{study=\"{}\",name=\"{}\"}} {}\n", s.record.id,
                       PrometheusLabel(s.record.name), s.pareto_trials);
  }
  out +=
      "# HELP sift_study_forecast_dollars Expected dollars at the study's finish (open studies, "
      "once a trial has ended).\n"
      "# TYPE sift_study_forecast_dollars gauge\n";
  for (const auto& s : studies) {
    if (!s.forecast) continue;
    out += fmt::format("sift_study_forecast_dollars{{study=\"{}\",name=\"{}\"}} {}\n", s.record.id,
                       PrometheusLabel(s.record.name), s.forecast->dollars);
  }
  return out;
}

}  // namespace sift::coordinator

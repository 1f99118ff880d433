// `sift export --pareto` and `--pick`: the study's cost/objective Pareto set, and one trial
// chosen from it by a rule the user writes, e.g. "val_accuracy>=0.88, min dollars" (the cheapest
// model within reach of the best) or "dollars<=2, max val_accuracy" (the best under $2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/report/report.h"

namespace sift::coordinator {

struct PickRule {
  struct Bound {
    std::string metric;
    bool at_least = true;  // >= (else <=)
    double value = 0;
  };
  std::vector<Bound> bounds;
  std::string goal;  // the metric to minimize or maximize; "" means the objective's best
  bool minimize = false;
};

// Parses "BOUND, ..., min|max METRIC" (a bound: METRIC>=X or METRIC<=X; at most one goal, the
// objective's best when none). A metric is the objective, dollars, seconds, epochs or any metric
// the trials reported. "" or the problem, naming the clause.
std::string ParsePick(const std::string& text, PickRule* out);

// A trial's value of `metric` ("seconds", "epochs", else TrialMetric: dollars from the ledger, the
// last report's metric, train_seconds measured when not reported); nothing when it has none.
std::optional<double> PickMetric(const TrialSummary& t, const std::string& metric);

// The trial the rule picks among the scored trials with a model (a checkpoint) that keep the
// study's constraints, or nothing with *why saying which bound no trial met and the closest one
// came.
std::optional<int64_t> PickTrial(const StudyReport& report, const PickRule& rule, std::string* why);

// The Pareto set (every scored trial, cheapest first) as a table: trial, objective, dollars,
// epochs, state, whether it has a model to export.
std::string FormatParetoSet(const StudyReport& report);

}  // namespace sift::coordinator

// A study of two objectives (val_accuracy up, dollars down) and one constraint (inference_ms <= 2)
// as the reports see it, for the frontier's tests (report/frontier.h): feasible, infeasible,
// unreported, failed and dominated trials.
#pragma once

#include <map>
#include <string>

#include "tests/coordinator/core/trial_fixture.h"

namespace sift::coordinator {

// A trial whose last report carries `metrics` (val_accuracy and any measured one), with a model.
inline TrialSummary Reported(int64_t n, double dollars, std::map<std::string, double> metrics,
                             search::TrialState state = search::TrialState::kCompleted) {
  const auto acc = metrics.find("val_accuracy");
  TrialSummary t =
      Trial(n, dollars, acc == metrics.end() ? std::nullopt : std::optional(acc->second),
            /*ended_at=*/1000 + static_cast<double>(n), state);
  t.epochs = 5;
  t.seconds = 10 + static_cast<double>(n);
  t.checkpoint = "trial-" + std::to_string(n) + ".ckpt";
  ReportRecord last;
  last.epoch = 5;
  last.metrics = std::move(metrics);
  t.reports.push_back(last);
  return t;
}

// Two objectives (val_accuracy up, dollars down) and inference_ms <= 2.
inline StudyReport TwoObjectiveStudy() {
  StudyReport r;
  r.study.record.id = 1;
  r.study.record.name = "frontier";
  r.study.record.created_at = 1000;
  r.study.metric = "val_accuracy";
  r.study.maximize = true;
  r.objectives = {{"val_accuracy", true}, {"dollars", false}};
  r.constraints = {search::Constraint{"inference_ms", 2, /*upper=*/true}};
  r.trials = {
      Reported(0, 0.10, {{"val_accuracy", 0.80}, {"inference_ms", 1.0}}),
      Reported(1, 0.05, {{"val_accuracy", 0.85}, {"inference_ms", 1.5}}),
      Reported(2, 0.20, {{"val_accuracy", 0.90}, {"inference_ms", 1.8}}),
      // Best and cheap, but too slow: it would dominate every other trial.
      Reported(3, 0.10, {{"val_accuracy", 0.95}, {"inference_ms", 3.0}}),
      Reported(4, 0.30, {{"val_accuracy", 0.92}}),  // inference_ms never reported
      Reported(5, 0.01, {{"val_accuracy", 0.99}, {"inference_ms", 0.5}},
               search::TrialState::kFailed),
      Reported(6, 0.15, {{"val_accuracy", 0.84}, {"inference_ms", 1.0}}),  // #1 dominates it
  };
  return r;
}

}  // namespace sift::coordinator

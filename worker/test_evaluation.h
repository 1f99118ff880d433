// A test evaluation: a lease that trains nothing. The worker loads the chosen trial's checkpoint
// and scores the test split once, so no trial is ever chosen by its test score (the coordinator
// asks for the study's best trial when the study completes, and for others on request).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sift/v1/workers_service.pb.h"

namespace sift::worker {

struct Datasets;

// What the evaluation needs from the worker's link to the coordinator.
struct EvaluationLink {
  std::function<std::shared_ptr<const Datasets>(const v1::DataSpec&)> data;
  // Puts checkpoint `name` at `*path` on this machine; "" or the problem.
  std::function<std::string(const std::string& name, std::string* path)> fetch;
  std::function<void(const std::map<std::string, double>& metrics)> complete;
  // `cannot_run`: this machine cannot run it (its data is missing); it goes to another worker.
  std::function<void(const std::string& error, bool cannot_run)> fail;
  std::string device = "cpu";
  int threads = 0;
};

// Why this machine cannot run the study's trials ("" if it can): an IDX study's files (its
// folder's four, or the named ones) are not here. Checked before a trial or an evaluation is
// charged; CSV/NPY/NPZ files are checked by their loader.
std::string DataMissingHere(const v1::DataSpec& d);

// Scores assignment `a` (evaluate_test set) and answers through `link`; never throws.
void RunTestEvaluation(const v1::TrialAssignment& a, const EvaluationLink& link);

}  // namespace sift::worker

// The metric names the built-in trainer reports, which configs may name as the objective, and
// which way each is better. The config (validation), the worker (reporting) and the coordinator
// (divergence, logs) read them here, so a new metric is added once.
#pragma once

#include <algorithm>
#include <iterator>
#include <string>

namespace sift::common {

inline constexpr const char* kValAccuracy = "val_accuracy";
inline constexpr const char* kValLoss = "val_loss";
inline constexpr const char* kTrainLoss = "train_loss";
inline constexpr const char* kValRmse = "val_rmse";
inline constexpr const char* kValMae = "val_mae";
inline constexpr const char* kValR2 = "val_r2";
// Classification beside accuracy, for imbalanced labels: the mean of the per-class recalls, the
// mean of the per-class F1 scores, and (two classes only) the area under the ROC curve.
inline constexpr const char* kValBalancedAccuracy = "val_balanced_accuracy";
inline constexpr const char* kValMacroF1 = "val_macro_f1";
inline constexpr const char* kValRocAuc = "val_roc_auc";
// Reported every epoch beside them, never an objective.
inline constexpr const char* kEpochSeconds = "epoch_seconds";
inline constexpr const char* kSamplesPerSecond = "samples_per_second";
inline constexpr const char* kDataWaitFraction = "data_wait_fraction";

// Measured by Sift for a trial rather than reported by it, so any study may name them as an
// objective or a constraint: the trial's dollars so far (the ledger's, preemption waste
// included), its training seconds, the model's parameter count and its forward time per
// validation sample. Each is better lower.
inline constexpr const char* kDollars = "dollars";
inline constexpr const char* kTrainSeconds = "train_seconds";
inline constexpr const char* kParams = "params";
inline constexpr const char* kInferenceMs = "inference_ms";
inline constexpr const char* kMeasuredMetrics[] = {kDollars, kTrainSeconds, kParams, kInferenceMs};

// The measured metrics that only grow as a trial trains (a bound on them, once crossed, stays
// crossed), and that the coordinator measures at each report rather than the worker.
inline bool OnlyGrows(const std::string& metric) {
  return metric == kDollars || metric == kTrainSeconds;
}

inline bool IsMeasuredMetric(const std::string& metric) {
  return std::find(std::begin(kMeasuredMetrics), std::end(kMeasuredMetrics), metric) !=
         std::end(kMeasuredMetrics);
}

// What a built-in trial can be asked to optimise, in the order error messages list them.
inline constexpr const char* kObjectiveMetrics[] = {
    kValAccuracy,         kValLoss,    kTrainLoss, kValRmse, kValMae, kValR2,
    kValBalancedAccuracy, kValMacroF1, kValRocAuc};

inline bool IsBuiltinObjective(const std::string& metric) {
  return std::find(std::begin(kObjectiveMetrics), std::end(kObjectiveMetrics), metric) !=
         std::end(kObjectiveMetrics);
}

// Accuracy, its balanced and F1 forms, ROC AUC and R^2 grow as a model gets better; every other
// built-in metric is a loss or an error and shrinks.
inline bool HigherIsBetter(const std::string& metric) {
  return metric == kValAccuracy || metric == kValR2 || metric == kValBalancedAccuracy ||
         metric == kValMacroF1 || metric == kValRocAuc;
}

// The objectives only one task reports (val_loss and train_loss fit both).
inline bool IsRegressionMetric(const std::string& metric) {
  return metric == kValRmse || metric == kValMae || metric == kValR2;
}
inline bool IsClassificationMetric(const std::string& metric) {
  return metric == kValAccuracy || metric == kValBalancedAccuracy || metric == kValMacroF1 ||
         metric == kValRocAuc;
}

}  // namespace sift::common

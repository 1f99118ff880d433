// `predict: true` on ASHA or Hyperband (issue 27, section 1): the curve model as a guard against
// the rung rules' best-known failure, stopping a slow starter. The guarded rules decide as
// usual; a STOP is overruled (the trial continues) when the curve ensemble gives it at least
// `keep` probability of ending better than the k-th best finished trial, and waits until
// `min_epochs` (a curve needs three points to be judged at all) so that a first rung at epoch 1
// cannot stop a trial before its curve has a shape. PAUSE is left alone: a
// paused trial can still be promoted, a stopped one is lost.
//
// The guard never stops anything itself, so it can only cost epochs, never lose a trial the
// rules would keep; both parts see every report, so a scheduler rebuilt from the Store replays
// the same decisions.
#pragma once

#include <memory>

#include "search/curve_scheduler.h"
#include "search/scheduler.h"

namespace sift::search {

struct PredictGuardOptions {
  double keep = 0.5;  // overrule a STOP when P(final better than the k-th best) >= this
  int64_t k = 1;
  int64_t min_epochs = 3;  // a STOP before this epoch waits (at least the ensemble's kMinPoints)
  double level = 0.9;
};

class PredictGuard : public Scheduler {
 public:
  PredictGuard(std::unique_ptr<Scheduler> rules, PredictGuardOptions options);
  Decision OnReport(const StudyView& study, const TrialView& trial) override;
  std::optional<int64_t> NextPromotion(const StudyView& study) override {
    return rules_->NextPromotion(study);
  }

 private:
  std::unique_ptr<Scheduler> rules_;
  CurveScheduler curve_;
  PredictGuardOptions options_;
};

}  // namespace sift::search

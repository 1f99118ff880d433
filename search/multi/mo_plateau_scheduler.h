// The plateau rule with several objectives: stop a trial when no objective has improved by more
// than min_delta (after smoothing, each on its own curve) for `patience` reports. Constraints
// rank infeasible behind feasible here too: while a trial is infeasible only a fall of its
// violation counts as progress (its objectives cannot lift it past any feasible trial), and
// becoming feasible does.
#pragma once

#include "search/plateau_scheduler.h"
#include "search/scheduler.h"

namespace sift::search {

class MoPlateauScheduler : public Scheduler {
 public:
  explicit MoPlateauScheduler(PlateauOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  PlateauOptions options_;
};

}  // namespace sift::search

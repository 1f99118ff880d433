// Plateau stopping: stop a trial whose objective has not improved by more than min_delta for
// `patience` reports. Optional exponential smoothing damps noisy curves.
#pragma once

#include "search/scheduler.h"

namespace sift::search {

struct PlateauOptions {
  int64_t patience = 3;
  double min_delta = 0.0;
  double smoothing = 0.0;     // EMA weight of the past in [0, 1); 0 = raw values
  int64_t min_resource = 1;   // never stop before this many epochs
};

class PlateauScheduler : public Scheduler {
 public:
  explicit PlateauScheduler(PlateauOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  PlateauOptions options_;
};

}  // namespace sift::search

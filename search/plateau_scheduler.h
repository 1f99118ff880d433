// Plateau stopping: stop a trial whose objective has not improved by more than min_delta for
// `patience` reports. Optional exponential smoothing damps noisy curves.
#pragma once

#include "search/scheduler.h"

namespace sift::search {

struct PlateauOptions {
  int64_t patience = 3;
  double min_delta = 0.0;
  double smoothing = 0.0;    // EMA weight of the past in [0, 1); 0 = raw values
  int64_t min_resource = 1;  // never stop before this many epochs
};

// The rule's walk along one curve: the best smoothed score so far and when it last improved by
// more than min_delta. Shared by the one- and multi-objective plateau schedulers.
class PlateauTrack {
 public:
  explicit PlateauTrack(const PlateauOptions& options) : options_(options) {}
  // Folds in the next (oriented) score; true when it improved the best.
  bool Add(double score, int64_t resource) {
    ema_ = first_ ? score : options_.smoothing * ema_ + (1.0 - options_.smoothing) * score;
    const bool improved = first_ || ema_ > best_ + options_.min_delta;
    if (improved) {
      best_ = ema_;
      best_at_ = resource;
    }
    first_ = false;
    return improved;
  }
  double best() const { return best_; }
  int64_t best_at() const { return best_at_; }

 private:
  PlateauOptions options_;
  bool first_ = true;
  double ema_ = 0, best_ = 0;
  int64_t best_at_ = 0;
};

class PlateauScheduler : public Scheduler {
 public:
  explicit PlateauScheduler(PlateauOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  PlateauOptions options_;
};

}  // namespace sift::search

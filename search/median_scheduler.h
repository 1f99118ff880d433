// Median stopping (Golovin et al., "Google Vizier", KDD 2017): stop a trial at epoch t when its
// best value so far (or its running average) is worse than the median of the running averages
// of the other trials at epoch t. Vizier compares with completed trials only; we compare with
// every trial that reached epoch t, as Ray's MedianStoppingRule does, so the rule starts working
// while the first trials are still training.
#pragma once

#include <map>
#include <vector>

#include "search/report_cursor.h"
#include "search/scheduler.h"

namespace sift::search {

struct MedianOptions {
  int64_t min_resource = 1;   // never stop before this epoch
  int64_t min_trials = 3;     // other trials needed at epoch t before the rule applies
  double grace = 0.0;         // stop only when worse than the median by more than this
  bool running_average = false;  // compare the trial's running average instead of its best
};

class MedianScheduler : public Scheduler {
 public:
  explicit MedianScheduler(MedianOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  struct Entry {
    double average;
    int64_t trial;
    bool operator<(const Entry& o) const {
      return average < o.average || (average == o.average && trial < o.trial);
    }
  };

  MedianOptions options_;
  // Per epoch: running averages (oriented scores) of every trial that reached it, sorted.
  std::map<int64_t, std::vector<Entry>> averages_;
  ReportCursor cursor_;
};

// Median of `sorted` leaving out the element at index `skip` (or none when skip < 0).
double MedianExcluding(const std::vector<double>& sorted, int64_t skip);

}  // namespace sift::search

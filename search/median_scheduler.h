// Median stopping (Golovin et al., "Google Vizier", KDD 2017): stop a trial at epoch t when its
// best value so far (or its running average) is worse than the median of the running averages
// of the other trials at epoch t. Vizier compares with completed trials only; we compare with
// every trial that reached epoch t, as Ray's MedianStoppingRule does, so the rule starts working
// while the first trials are still training.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "search/rank_window.h"
#include "search/report_cursor.h"
#include "search/scheduler.h"

namespace sift::search {

struct MedianOptions {
  int64_t min_resource = 1;      // never stop before this epoch
  int64_t min_trials = 3;        // other trials needed at epoch t before the rule applies
  double grace = 0.0;            // stop only when worse than the median by more than this
  bool running_average = false;  // compare the trial's running average instead of its best
};

// The running averages recorded at one epoch, in a RankWindow focused on the middle (see
// rank_window.h), so that adding one costs O(1) in practice however many are recorded (the two
// heaps split exactly at the middle that this replaces sent an entry through every level of a
// heap on every other addition), and the median of all but one recorded entry is read in O(1):
// it needs only the entries just around the middle.
class MedianSplit {
 public:
  struct Entry {
    double average;  // NaN recorded as -infinity, so that the order stays strict
    int64_t trial;
    bool operator<(const Entry& o) const {
      return average < o.average || (average == o.average && trial < o.trial);
    }
  };
  // A trial already recorded is left as it is.
  void Add(int64_t trial, double average);
  int64_t size() const { return averages_.size(); }
  // Whether `trial` is recorded with this average.
  bool Has(int64_t trial, double average) const;
  // The median of the recorded averages, leaving out `self` when it is recorded (`self_recorded`),
  // computed as MedianExcluding on the sorted averages would be. Needs one entry left.
  double MedianWithout(const Entry& self, bool self_recorded) const;
  static double Orderable(double average);

 private:
  RankWindow<Entry, std::less<Entry>> averages_;  // focused on size() / 2
  std::vector<double> recorded_;                  // by trial number; NaN when not recorded
};

class MedianScheduler : public Scheduler {
 public:
  explicit MedianScheduler(MedianOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  MedianOptions options_;
  // Per epoch: running averages (oriented scores) of every trial that reached it.
  std::map<int64_t, MedianSplit> averages_;
  ReportCursor cursor_;
};

// Median of `sorted` leaving out the element at index `skip` (or none when skip < 0).
double MedianExcluding(const std::vector<double>& sorted, int64_t skip);

}  // namespace sift::search

// Median stopping with several objectives and constraints: MedianScheduler's rule
// (median_scheduler.h) in the constrained order. At epoch t a trial is compared with every other
// trial that reached t: if its constraint violation there is above the others' median violation
// it stops (infeasible ranks behind feasible); if equal (typically both feasible), it stops when
// the componentwise median of the others' running averages, less `grace`, dominates its own best
// values (or running averages), as DominatedByMedian (mo_median.h) decides.
#pragma once

#include <map>
#include <vector>

#include "search/median_scheduler.h"
#include "search/report_cursor.h"
#include "search/scheduler.h"

namespace sift::search {

class MoMedianScheduler : public Scheduler {
 public:
  explicit MoMedianScheduler(MedianOptions options) : options_(options) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

 private:
  struct Entry {
    int64_t trial;
    std::vector<double> averages;  // oriented running average of each objective up to t
    double violation;
  };
  MedianOptions options_;
  std::map<int64_t, std::vector<Entry>> at_;  // per epoch, every trial that reached it
  ReportCursor cursor_;
};

}  // namespace sift::search

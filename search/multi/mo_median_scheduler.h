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
    double violation;
  };
  // Every trial that reached one epoch, with the violations and each objective's averages kept
  // in MedianSplits (median_scheduler.h) as they arrive, as the single-objective rule keeps its
  // averages: a decision reads its medians in O(1), and adding costs O(1) in practice.
  struct Epoch {
    std::vector<Entry> entries;
    // Each entry's oriented running averages (or bests) up to the epoch, `dims` per entry, one
    // after another: one vector per entry cost an allocation at every report.
    std::vector<double> values;
    size_t dims = 0;
    // Trial number -> its first entry, -1 when none: a vector, as trial numbers count from 0
    // (a hash map's lookups were the largest part of a CONTINUE).
    std::vector<int64_t> index;
    MedianSplit violations;  // filled once a violation is not 0
    bool violated = false;
    std::vector<MedianSplit> columns;
    bool unordered = false;  // a NaN somewhere: there is no order, recompute as before
    void Add(int64_t trial, const std::vector<double>& averages, double violation);
    // The entry of `trial`, -1 when it has none.
    int64_t Find(int64_t trial) const;
    const double* Averages(size_t entry) const { return values.data() + entry * dims; }
  };
  // The other trials' median violation and median point at `epoch`, leaving out `trial`.
  void Medians(const Epoch& epoch, int64_t trial, double* violation,
               std::vector<double>* point) const;
  MedianOptions options_;
  std::map<int64_t, Epoch> at_;  // per epoch
  std::vector<double> median_;   // OnReport's scratch
  std::vector<double> summary_;  // OnReport's scratch: a trial's averages
  ReportCursor cursor_;
};

}  // namespace sift::search

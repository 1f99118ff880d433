// MO-ASHA (Schmucker et al. 2021) and, with several brackets, multi-objective asynchronous
// Hyperband: AshaScheduler's rules (asha_scheduler.h) with the top 1/eta of a rung taken in the
// constrained order (objective_vectors.h): feasible trials by non-dominated rank, the cut rank
// by greedy hypervolume (mo_rungs.h), then infeasible ones by violation. The same options, rung
// levels and bracket hash as AshaScheduler, so a study moving from one objective to several
// keeps its schedule.
//
// A trial's vector at a rung is every objective's value at the rung's epoch (a report carries
// them together); one missing or not a number counts as the worst.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/asha_scheduler.h"
#include "search/multi/rung_ranks.h"
#include "search/report_cursor.h"
#include "search/scheduler.h"

namespace sift::search {

class MoAshaScheduler : public Scheduler {
 public:
  explicit MoAshaScheduler(AshaOptions options);

  Decision OnReport(const StudyView& study, const TrialView& trial) override;
  std::optional<int64_t> NextPromotion(const StudyView& study) override;

  int BracketOf(int64_t trial_number) const { return brackets_.Of(trial_number); }
  const std::vector<int64_t>& Levels(int bracket) const { return brackets_.Levels(bracket); }

 private:
  void Sync(const StudyView& study, const TrialView* reporting);
  // The size of the top of rung k of bracket b: the survivors (stopping) or the promotable.
  int64_t TopCount(int b, int k, bool survivors) const;

  AshaOptions options_;
  AshaBrackets brackets_;
  std::vector<std::vector<RungRanks>> rungs_;  // per bracket, per rung
  ReportCursor cursor_;
};

}  // namespace sift::search

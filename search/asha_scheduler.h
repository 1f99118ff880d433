// ASHA (Li et al., MLSys 2020) and, with several brackets, asynchronous Hyperband (Li et al.,
// JMLR 2018): successive halving without synchronisation barriers.
//
// Variant `stopping`: at each rung a trial outside the top 1/eta of the trials recorded there so
// far stops. Variant `promotion`: it pauses instead, and NextPromotion resumes a paused trial once
// it is in the top 1/eta of its rung (the paper's get_job, Algorithm 2). A trial already in the
// top 1/eta when it reaches the rung trains on at once: pausing and promoting it immediately would
// give the same schedule at the price of a checkpoint round trip.
//
// Everything is derived from the view: rung scores are the values reported at the rung's epoch,
// and a trial counts as promoted from a rung once it has values beyond it or is no longer PAUSED.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "search/report_cursor.h"
#include "search/rungs.h"
#include "search/scheduler.h"

namespace sift::search {

struct AshaOptions {
  int64_t eta = 3;
  int64_t min_resource = 1;
  int64_t max_resource = 1;
  bool promotion = false;  // false: the stopping variant
  int64_t brackets = 1;    // > 1: Hyperband; bracket b starts at min_resource * eta^b
};

class AshaScheduler : public Scheduler {
 public:
  explicit AshaScheduler(AshaOptions options);

  Decision OnReport(const StudyView& study, const TrialView& trial) override;
  std::optional<int64_t> NextPromotion(const StudyView& study) override;

  int BracketOf(int64_t trial_number) const;
  const std::vector<int64_t>& Levels(int bracket) const { return levels_[bracket]; }

 private:
  void Sync(const StudyView& study, const TrialView* reporting);
  std::string Prefix(int bracket) const;

  AshaOptions options_;
  std::vector<std::vector<int64_t>> levels_;    // per bracket
  std::vector<std::vector<RungRecord>> rungs_;  // per bracket, per rung
  // Promotion: per bracket, per rung, the rung's entries less those that can never be promoted
  // from it again (values beyond the rung, or ended), best first. NextPromotion drops them as it
  // meets them, so it no longer walks past every trial already promoted: each entry is passed
  // over once, not once per call. Trials still running at the rung's epoch stay (a few).
  using Waiting =
      std::set<RungRecord::Entry, bool (*)(const RungRecord::Entry&, const RungRecord::Entry&)>;
  std::vector<std::vector<Waiting>> waiting_;
  ReportCursor cursor_;
};

}  // namespace sift::search

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

#include <cstdint>
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

// Hyperband's brackets, as ASHA and MO-ASHA (multi/mo_asha_scheduler.h) share them: each
// bracket's rung levels, a trial's bracket, and the order NextPromotion visits the rungs in.
class AshaBrackets {
 public:
  explicit AshaBrackets(const AshaOptions& options);
  int Of(int64_t trial_number) const {
    return HyperbandBracket(trial_number, static_cast<int64_t>(levels_.size()), eta_);
  }
  size_t size() const { return levels_.size(); }
  const std::vector<int64_t>& Levels(int bracket) const { return levels_[bracket]; }
  // Every (bracket, rung), the highest rung first (the paper's order), then by bracket.
  const std::vector<std::pair<int, int>>& HighestFirst() const { return highest_first_; }
  // The reasons' prefix: "<one>: " with one bracket, "<several> bracket 2: " with more.
  std::string Prefix(int bracket, const std::string& one, const std::string& several) const {
    if (levels_.size() == 1) return one + ": ";
    return several + " bracket " + std::to_string(bracket) + ": ";
  }

 private:
  int64_t eta_;
  std::vector<std::vector<int64_t>> levels_;
  std::vector<std::pair<int, int>> highest_first_;
};

class AshaScheduler : public Scheduler {
 public:
  explicit AshaScheduler(AshaOptions options);

  Decision OnReport(const StudyView& study, const TrialView& trial) override;
  std::optional<int64_t> NextPromotion(const StudyView& study) override;

  int BracketOf(int64_t trial_number) const { return brackets_.Of(trial_number); }
  const std::vector<int64_t>& Levels(int bracket) const { return brackets_.Levels(bracket); }

 private:
  void Sync(const StudyView& study, const TrialView* reporting);

  AshaOptions options_;
  AshaBrackets brackets_;
  std::vector<std::vector<RungRecord>> rungs_;  // per bracket, per rung
  // Promotion: per bracket, per rung, what NextPromotion may still have to find: every entry
  // that has been in the rung's top 1/eta (RungRecord::Add says which one entered), less those
  // it dropped for good (values beyond the rung, or ended), in a 4-ary heap best first. A trial
  // below the cutoff is listed only once the cutoff reaches it, so the many that pause for good
  // cost a report nothing here (the std::set of every paused trial this replaces took a walk
  // down a red-black tree of up to n nodes, one cache miss a level, and an allocation).
  struct Candidates {
    std::vector<RungRecord::Entry> best_first;
    std::vector<uint8_t> listed;  // by trial number: once listed (dropped ones stay marked)
  };
  void List(Candidates& c, const RungRecord::Entry& e);
  std::vector<std::vector<Candidates>> candidates_;
  std::vector<RungRecord::Entry> set_aside_;  // scratch for NextPromotion
  ReportCursor cursor_;
};

}  // namespace sift::search

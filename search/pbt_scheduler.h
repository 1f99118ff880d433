// Population-based training (issue 27, section 2; Jaderberg et al. 2017, with Ray Tune's PBT as
// the reference for quantiles, perturbation factors and resampling).
//
// Synchronous, unlike Ray's default: every member pauses at each interval epoch E, and once the
// whole population has reached E (or ended) the members resume, the bottom quantile each from a
// top-quantile member's checkpoint at E with explored parameters. Waiting costs some idle
// workers, but it makes the plan for E a function of the members' values at E alone, so a
// restarted or faulted study replays the same lineage; Ray's asynchronous variant depends on
// which members happened to report first.
//
// Members are the first `population` trials; later trials are stopped at their first report.
// A donor must hold a checkpoint at E (TrialView::checkpoints), so exploiting a member without
// one cannot be planned.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "search/rng.h"
#include "search/scheduler.h"
#include "search/space.h"

namespace sift::search {

struct PbtOptions {
  int64_t population = 4;
  int64_t interval_epochs = 1;         // members pause every this many epochs
  double quantile = 0.25;              // bottom and top fraction (at most half the population)
  double resample_probability = 0.25;  // per parameter: draw afresh instead of perturbing
  std::vector<double> perturb = {0.8, 1.2};  // numeric values are multiplied by one of these
  std::vector<std::string> mutable_params;   // explored at an exploit; the others are kept
};

// One member as the plan sees it at the interval epoch.
struct PbtMember {
  int64_t trial = 0;
  double score = 0;             // oriented (larger is better); NaN ranks worst
  bool has_checkpoint = false;  // at the interval epoch
  bool can_resume = false;      // not ended: a bottom member that ended is not revived
  Params params;
};

// The exploit/explore plan for the interval at `epoch`: one entry per bottom member that copies
// a top member. Seeded per (epoch, member), so one member's plan does not depend on the others'.
std::vector<Exploit> PlanPbtInterval(const PbtOptions& options, const SearchSpace* space,
                                     uint64_t seed, int64_t epoch,
                                     const std::vector<PbtMember>& members);

// The donor's parameters explored: each mutable parameter resampled from the space with
// resample_probability, else perturbed (numbers by a factor, clamped into bounds; categoricals
// one choice up or down). Appends "name a -> b" notes to `changes`.
Params ExplorePbtParams(const PbtOptions& options, const SearchSpace& space, const Params& donor,
                        Rng& rng, std::vector<std::string>* changes);

class PbtScheduler : public Scheduler {
 public:
  explicit PbtScheduler(PbtOptions options) : options_(std::move(options)) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override;
  std::optional<int64_t> NextPromotion(const StudyView& study) override;
  std::optional<Exploit> ExploitOnResume(const StudyView& study, int64_t trial) override;

  // The (trial, epoch) checkpoints a member may still copy: at each interval epoch where a
  // member still waits, every member's checkpoint at that epoch. Once no member waits there,
  // each exploit of that interval was leased, its checkpoint copied, so retention may drop them.
  std::set<std::pair<int64_t, int64_t>> CheckpointsToKeep(const StudyView& study) const;

  const PbtOptions& options() const { return options_; }

 private:
  bool IsMember(int64_t trial) const { return trial < options_.population; }
  // Whether every member has reached `epoch` or ended.
  bool IntervalComplete(const StudyView& study, int64_t epoch) const;
  std::vector<PbtMember> MembersAt(const StudyView& study, int64_t epoch) const;

  PbtOptions options_;
};

}  // namespace sift::search

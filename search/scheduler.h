// Scheduler: decides CONTINUE / STOP / PAUSE at each report. Pure, like Searcher.
#pragma once

#include <cstdint>
#include <optional>

#include "search/decision.h"
#include "search/study_view.h"

namespace sift::search {

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Called after `trial` reported a new value; trial.values already holds it, and `trial` is
  // also study.trials[trial.number].
  virtual Decision OnReport(const StudyView& study, const TrialView& trial) = 0;

  // For schedulers that pause trials (promotion ASHA, Hyperband): a paused trial to resume now,
  // asked before a new configuration is created. Default: never.
  virtual std::optional<int64_t> NextPromotion(const StudyView& study) { return std::nullopt; }

  // For population-based training: whether the trial NextPromotion returned resumes from another
  // trial's checkpoint with new parameters instead of its own. Default: never.
  virtual std::optional<Exploit> ExploitOnResume(const StudyView& study, int64_t trial) {
    return std::nullopt;
  }
};

}  // namespace sift::search

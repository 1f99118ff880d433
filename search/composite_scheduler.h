// Several stopping rules at once, e.g. ASHA plus plateau stopping: every rule sees every report
// (so their caches stay in step), a STOP from any rule wins, and otherwise the primary decides.
// Promotions come from the primary alone.
#pragma once

#include <memory>
#include <vector>

#include "search/scheduler.h"

namespace sift::search {

class CompositeScheduler : public Scheduler {
 public:
  CompositeScheduler(std::unique_ptr<Scheduler> primary,
                     std::vector<std::unique_ptr<Scheduler>> extra)
      : primary_(std::move(primary)), extra_(std::move(extra)) {}

  Decision OnReport(const StudyView& study, const TrialView& trial) override {
    Decision d = primary_->OnReport(study, trial);
    for (auto& s : extra_) {
      Decision e = s->OnReport(study, trial);
      if (e.action == Action::kStop && d.action != Action::kStop) d = std::move(e);
    }
    return d;
  }

  std::optional<int64_t> NextPromotion(const StudyView& study) override {
    return primary_->NextPromotion(study);
  }

 private:
  std::unique_ptr<Scheduler> primary_;
  std::vector<std::unique_ptr<Scheduler>> extra_;
};

}  // namespace sift::search

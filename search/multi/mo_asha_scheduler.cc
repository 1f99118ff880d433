#include "search/multi/mo_asha_scheduler.h"

#include <algorithm>

#include "search/number_text.h"
#include "search/rungs.h"

namespace sift::search {

MoAshaScheduler::MoAshaScheduler(AshaOptions options) : options_(options), brackets_(options) {
  for (size_t b = 0; b < brackets_.size(); ++b) {
    rungs_.emplace_back(brackets_.Levels(static_cast<int>(b)).size(),
                        RungRanks(options_.promotion));
  }
}

void MoAshaScheduler::Sync(const StudyView& study, const TrialView* reporting) {
  cursor_.Sync(
      study, reporting,
      [&] {
        for (auto& bracket : rungs_) {
          for (auto& rung : bracket) rung.Clear();
        }
      },
      [&](const TrialView& t, int64_t resource, double) {
        const int b = BracketOf(t.number);
        const int k = RungIndex(brackets_.Levels(b), resource);
        if (k >= 0) rungs_[b][k].Add(PointAt(study, t, resource));
      });
}

int64_t MoAshaScheduler::TopCount(int b, int k, bool survivors) const {
  const auto n = static_cast<int64_t>(rungs_[b][k].size());
  return std::min(n, survivors ? SurvivorCount(n, options_.eta) : PromotableCount(n, options_.eta));
}

Decision MoAshaScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  Sync(study, &trial);
  const int b = BracketOf(trial.number);
  const int64_t resource = trial.LastResource();
  const int k = RungIndex(brackets_.Levels(b), resource);
  if (k < 0) return Decision::Continue();
  const int64_t top = TopCount(b, k, !options_.promotion);
  const bool in = rungs_[b][k].InTop(trial.number, top);
  if (!options_.promotion && in) return Decision::Continue();
  // Appended into one buffer, as AshaScheduler's reason (number_text.h): most rung decisions
  // are stops, and this text is a large part of one.
  std::string r = brackets_.Prefix(b, "mo-asha", "mo-hyperband");
  r.reserve(r.size() + 128);
  const auto add = [&r](const auto&... parts) { (r.append(parts), ...); };
  add(options_.promotion ? in ? "promoted at rung " : "paused at rung " : "stopped at rung ",
      std::to_string(k), " (epoch ", std::to_string(resource), "): ", in ? "in" : "not in",
      " the top ", std::to_string(top), " of ", std::to_string(rungs_[b][k].size()),
      " by constrained non-dominated rank (top 1/", std::to_string(options_.eta), ")");
  const double violation = ViolationAt(study, trial, resource);
  if (violation > 0) add("; infeasible (violation ", G6(violation), ")");
  if (!options_.promotion) return Decision::Stop(std::move(r));
  return in ? Decision::Continue(std::move(r)) : Decision::Pause(std::move(r));
}

std::optional<int64_t> MoAshaScheduler::NextPromotion(const StudyView& study) {
  if (!options_.promotion) return std::nullopt;
  Sync(study, nullptr);
  // Highest rung first (the paper's order), then the promotable trials in order of selection.
  for (const auto& [b, k] : brackets_.HighestFirst()) {
    const int64_t level = brackets_.Levels(b)[k];
    const auto found = rungs_[b][k].FirstInTop(TopCount(b, k, false), [&](int64_t number) {
      const TrialView& t = study.trials[static_cast<size_t>(number)];
      // Values only grow and ended trials stay ended: past the rung, or ended, is for good.
      if (t.LastResource() != level || IsTerminal(t.state)) return RungRanks::Wait::kGone;
      return t.state == TrialState::kPaused ? RungRanks::Wait::kReady : RungRanks::Wait::kNotYet;
    });
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace sift::search

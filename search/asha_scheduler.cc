#include "search/asha_scheduler.h"

#include <algorithm>
#include <string>

#include "search/number_text.h"

namespace sift::search {

AshaBrackets::AshaBrackets(const AshaOptions& options) : eta_(options.eta) {
  for (int64_t b = 0; b < std::max<int64_t>(1, options.brackets); ++b) {
    levels_.push_back(
        RungLevels(options.min_resource, options.max_resource, options.eta, /*rate=*/b));
  }
  size_t max_rungs = 0;
  for (const auto& levels : levels_) max_rungs = std::max(max_rungs, levels.size());
  for (size_t k = max_rungs; k-- > 0;) {
    for (size_t b = 0; b < levels_.size(); ++b) {
      if (k < levels_[b].size()) highest_first_.emplace_back(b, k);
    }
  }
}

AshaScheduler::AshaScheduler(AshaOptions options) : options_(options), brackets_(options) {
  for (size_t b = 0; b < brackets_.size(); ++b) {
    const size_t rungs = brackets_.Levels(static_cast<int>(b)).size();
    rungs_.emplace_back(rungs, RungRecord(options_.eta, !options_.promotion));
    candidates_.emplace_back(rungs);
  }
}

void AshaScheduler::Sync(const StudyView& study, const TrialView* reporting) {
  cursor_.Sync(
      study, reporting,
      [&] {
        for (auto& bracket : rungs_) {
          for (auto& rung : bracket) rung = RungRecord(options_.eta, !options_.promotion);
        }
        for (auto& bracket : candidates_) {
          for (auto& c : bracket) c = Candidates{};
        }
      },
      [&](const TrialView& t, int64_t resource, double value) {
        const int b = BracketOf(t.number);
        const int k = RungIndex(brackets_.Levels(b), resource);
        if (k < 0) return;
        const auto entered = rungs_[b][k].Add(t.number, study.Score(value));
        if (options_.promotion && entered) List(candidates_[b][k], *entered);
      });
}

Decision AshaScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  Sync(study, &trial);
  const int b = BracketOf(trial.number);
  const int64_t resource = trial.LastResource();
  const int k = RungIndex(brackets_.Levels(b), resource);
  if (k < 0) return Decision::Continue();
  const RungRecord& rung = rungs_[b][k];
  const double score = study.Score(*trial.LastValue());
  const bool top = rung.InTop(trial.number, score);
  const int64_t n = rung.size();
  if (!options_.promotion && top) return Decision::Continue();
  // The reason, appended into one buffer rather than snprintf'd or concatenated (see
  // number_text.h): stopping most trials at rung 0 makes this text the bulk of the decision.
  std::string r = brackets_.Prefix(b, "asha", "hyperband");
  r.reserve(r.size() + 96);
  const auto add = [&r](const auto&... parts) { (r.append(parts), ...); };
  const std::string eta = std::to_string(options_.eta), of = std::to_string(n);
  const std::string at = std::to_string(k), epoch = std::to_string(resource);
  if (!options_.promotion) {
    add("below rung ", at, " (epoch ", epoch, ") cutoff ", G6(study.Score(rung.Cutoff().score)),
        " (top 1/", eta, " of ", of, " trials)");
    return Decision::Stop(std::move(r));
  }
  const std::string top_k = std::to_string(rung.top_count());
  add(top ? "promoted at rung " : "paused at rung ", at, " (epoch ", epoch,
      top ? "): in the top " : "): not in the top ", top_k, " of ", of, " (top 1/", eta, ")");
  return top ? Decision::Continue(std::move(r)) : Decision::Pause(std::move(r));
}

void AshaScheduler::List(Candidates& c, const RungRecord::Entry& e) {
  const auto t = static_cast<size_t>(e.trial);
  if (t >= c.listed.size()) c.listed.resize(std::max(t + 1, 2 * c.listed.size()), 0);
  if (c.listed[t]) return;  // in the heap already, or dropped for good
  c.listed[t] = 1;
  Push4(c.best_first, e, RungRecord::Better);
}

std::optional<int64_t> AshaScheduler::NextPromotion(const StudyView& study) {
  if (!options_.promotion) return std::nullopt;
  Sync(study, nullptr);
  // Highest rung first (the paper's order), then the best unpromoted trial within the top 1/eta.
  for (const auto& [b, k] : brackets_.HighestFirst()) {
    const RungRecord& rung = rungs_[b][k];
    if (rung.top_count() == 0) continue;
    const int64_t level = brackets_.Levels(b)[k];
    // In rank order within the top 1/eta, as the rung itself would be walked: every entry of
    // the top is listed, so the walk ends at the first listed one below the cutoff.
    std::vector<RungRecord::Entry>& heap = candidates_[b][k].best_first;
    std::optional<int64_t> found;
    set_aside_.clear();
    while (!heap.empty() && !RungRecord::Better(rung.Cutoff(), heap.front())) {
      const TrialView& t = study.trials[static_cast<size_t>(heap.front().trial)];
      if (t.state == TrialState::kPaused && t.LastResource() == level) {
        found = t.number;
        break;
      }
      const RungRecord::Entry e = Pop4(heap, RungRecord::Better);
      // Values only grow and ended trials stay ended: past the rung, or ended, is for good.
      if (t.LastResource() == level && !IsTerminal(t.state)) set_aside_.push_back(e);
    }
    for (const RungRecord::Entry& e : set_aside_) Push4(heap, e, RungRecord::Better);
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace sift::search

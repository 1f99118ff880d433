// StudyRunner: one study's searcher, scheduler and in-memory history. Single-threaded: the
// Coordinator holds its lock around every call. It decides; the Coordinator applies each change
// here (Apply* methods) in the order of the study's Store writes, and starts over from the Store
// (Rebuild) when one of them failed to commit.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/cost/quota.h"
#include "coordinator/store/records.h"
#include "search/decision.h"
#include "search/scheduler.h"
#include "search/searcher.h"

namespace sift::coordinator {

// What to run next for a study.
struct NextTrial {
  int64_t number = 0;
  bool is_new = false;      // a fresh suggestion (not yet in the Store)
  search::Params params;    // searched parameters
  int64_t start_epoch = 0;  // epochs already trained (promotion or resume)
};

class StudyRunner {
 public:
  // `config` must be valid (ParseStudyConfig returned no errors). `priors`: what warm_start
  // loaded (LoadWarmStart), handed to every searcher the runner makes; never trials here.
  StudyRunner(int64_t id, common::StudyConfig config, double created_at,
              search::Priors priors = {});

  // Rebuilds history from the Store after a restart: trials and their reports. Their cost so
  // far comes from the ledger (ApplyCost).
  void Restore(const std::vector<TrialRecord>& trials, const std::vector<ReportRecord>& reports);
  // The same, with the reports streamed: `reports(fn)` calls fn on each, in the Store's order.
  using ReportSource = std::function<void(const std::function<void(const ReportRecord&)>&)>;
  void RestoreFrom(const std::vector<TrialRecord>& trials, const ReportSource& reports);

  // Starts the history over from the Store (what committed) with a fresh searcher and scheduler,
  // whose caches may hold values the Store never got; the trials' costs so far are kept.
  void Rebuild(const std::vector<TrialRecord>& trials, const std::vector<ReportRecord>& reports);
  void RebuildFrom(const std::vector<TrialRecord>& trials, const ReportSource& reports);

  int64_t id() const { return id_; }
  const common::StudyConfig& config() const { return config_; }
  const search::StudyView& view() const { return view_; }
  StudyState state() const { return state_; }
  const std::string& end_reason() const { return end_reason_; }
  double created_at() const { return created_at_; }

  // The next trial to lease, or nothing now. `spent` is the study's dollars so far.
  // Sets *why_none to a reason the study cannot make new work anymore (exhausted, budget).
  std::optional<NextTrial> PickNext(double now, double spent, std::string* why_none);

  // Decision for a new report (not yet applied): the scheduler's, overridden by budgets.
  search::Decision Decide(int64_t number, int64_t epoch, double value, double now, double spent);

  // Whether the study has nothing left to run or wait for; `reason` says why it ended.
  bool Finished(double now, double spent, std::string* reason);

  // Apply a change that the Store already holds.
  void ApplyNewTrial(int64_t number, const search::Params& params);
  void ApplyState(int64_t number, search::TrialState state);
  void ApplyReport(int64_t number, int64_t epoch, double value);
  void ApplyCost(int64_t number, double dollars, double seconds);  // the ledger's charge
  void ApplyStudyState(StudyState state, const std::string& reason);
  void ApplyBudget(const common::BudgetConfig& budget) { config_.budget = budget; }
  // The quotas on its tags and what their studies have spent: they limit it as max_dollars
  // does. Set by the Coordinator before each decision (other studies spend meanwhile).
  void SetQuotaUse(std::vector<QuotaUse> quotas) { quotas_ = std::move(quotas); }
  // Paused time does not count against max_hours: a study paused overnight resumes.
  void NotePaused(double at) { paused_since_ = at; }
  void NoteResumed(double at);

  int64_t CountInState(search::TrialState state) const {
    return in_state_[static_cast<size_t>(state)];
  }

 private:
  void MakeAlgorithms();
  bool BudgetExhausted(double now, double spent, std::string* why) const;
  // Whether one more trial fits the dollar budget: each running trial and the new one will spend
  // about one more epoch (at the measured cost per epoch) before they can be stopped.
  bool CanAffordNewTrial(double spent, std::string* why) const;

  int64_t id_;
  common::StudyConfig config_;
  double created_at_;
  StudyState state_ = StudyState::kRunning;
  std::string end_reason_;
  search::Priors priors_;
  std::unique_ptr<search::Searcher> searcher_;
  std::unique_ptr<search::Scheduler> scheduler_;
  search::StudyView view_;
  // Trials per state and the requeued ones (lowest number first), kept as states change: every
  // acquisition reads them, and walking 10,000 trials for them made its cost grow with the study.
  std::array<int64_t, 7> in_state_{};
  std::set<int64_t> pending_;
  bool exhausted_ = false;  // the searcher has nothing more to suggest
  std::vector<QuotaUse> quotas_;
  double paused_seconds_ = 0;           // over pauses that ended
  std::optional<double> paused_since_;  // while paused
};

}  // namespace sift::coordinator

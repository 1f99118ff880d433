// StudyRunner: one study's searcher, scheduler and in-memory history. Single-threaded: the
// Coordinator holds its lock around every call. It decides; the Coordinator applies each change
// here (Apply* methods) in the order of the study's Store writes, and starts over from the Store
// (Rebuild) when one of them failed to commit.
#pragma once

#include <array>
#include <functional>
#include <map>
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
  // Population-based training: the promoted member resumes from another's checkpoint at
  // start_epoch with exploit->params (also in `params`).
  std::optional<search::Exploit> exploit;
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

  // Decision for a new report (not yet applied): the scheduler's, overridden by budgets and by
  // a constraint on a metric that only grows (dollars, train_seconds) once it is crossed.
  // `metrics`: the report's, with the ones Sift measures added (AddMeasured).
  search::Decision Decide(int64_t number, int64_t epoch,
                          const std::map<std::string, double>& metrics, double now, double spent);
  // The same for a report of the objective alone (a single-objective study's tests).
  search::Decision Decide(int64_t number, int64_t epoch, double value, double now, double spent);

  // Whether the study's objectives or constraints name what the coordinator measures per trial
  // (dollars, train_seconds): each report then carries them, so a restart replays the same.
  bool MeasuresCost() const { return measures_cost_; }
  // Adds the trial's dollars and train_seconds so far to `metrics` (where the study names them):
  // what it was charged for ended leases plus `open_dollars`/`open_seconds` of the running one.
  void AddMeasured(int64_t number, double open_dollars, double open_seconds,
                   std::map<std::string, double>* metrics) const;

  // Whether the study has nothing left to run or wait for; `reason` says why it ended.
  bool Finished(double now, double spent, std::string* reason);

  // Apply a change that the Store already holds.
  void ApplyNewTrial(int64_t number, const search::Params& params);
  void ApplyState(int64_t number, search::TrialState state);
  // The report's values of every objective and constraint metric it has (finite objective
  // values only: a diverged trial's last one never enters the view).
  void ApplyReport(int64_t number, int64_t epoch, const std::map<std::string, double>& metrics);
  void ApplyReport(int64_t number, int64_t epoch, double value);
  void ApplyCost(int64_t number, double dollars, double seconds);  // the ledger's charge
  // A checkpoint recorded for the trial (a report's, a pause's or a preemption's): in a PBT
  // study, an epoch's own joins TrialView::checkpoints, what a member may copy.
  void ApplyCheckpoint(int64_t number, const std::string& name);
  // A stored exploit: the trial trains on with `params`.
  void ApplyExploit(int64_t number, const search::Params& params);
  // (trial, epoch) checkpoints that retention must keep: ones a PBT member may still copy.
  std::set<std::pair<int64_t, int64_t>> CheckpointsToKeep() const;
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
  // Calls fn(curve, value) for each of the trial's curves (objectives, constraints) that
  // `metrics` has a value for.
  template <typename Fn>
  void ForEachCurve(search::TrialView& trial, const std::map<std::string, double>& metrics,
                    Fn fn) const;
  // A constraint `dollars <= X` or `train_seconds <= X` that the report broke: those only grow.
  bool CrossedGrowingBound(const std::map<std::string, double>& metrics, std::string* why) const;
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
  bool measures_cost_ = false;  // MeasuresCost()
  bool exhausted_ = false;      // the searcher has nothing more to suggest
  std::vector<QuotaUse> quotas_;
  double paused_seconds_ = 0;           // over pauses that ended
  std::optional<double> paused_since_;  // while paused
};

}  // namespace sift::coordinator

// StudyRunner on its own: one study's searcher, scheduler and budgets, driven the way the
// Coordinator drives it (PickNext, Decide, then the Apply* calls once "the Store" holds the
// change), with a real config, searcher and scheduler and no Coordinator, gRPC or database.
#include "coordinator/core/study_runner.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>

namespace sift::coordinator {
namespace study_runner_test {

using search::Action;
using search::TrialState;

constexpr double kT0 = 1'000'000;  // the study's creation time (unix seconds)

common::StudyConfig Config(const std::string& extra) {
  const std::string text =
      "name: runner\n"
      "objective: {metric: val_accuracy, direction: maximize}\n"
      "search_space:\n"
      "  lr: {type: float, low: 0.0001, high: 0.1, scale: log}\n"
      "  hidden: {type: int, low: 16, high: 256}\n"
      "seed: 11\n" +
      extra;
  common::StudyConfig config;
  const auto errors = common::ParseStudyConfig(text, "runner.yaml", &config);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return config;
}

// What the Coordinator does when it leases PickNext's answer: a new trial is stored, then runs.
NextTrial Lease(StudyRunner& r, double now = kT0, double spent = 0) {
  std::string why;
  auto next = r.PickNext(now, spent, &why);
  EXPECT_TRUE(next.has_value()) << why;
  if (!next) return {};
  if (next->is_new) r.ApplyNewTrial(next->number, next->params);
  r.ApplyState(next->number, TrialState::kRunning);
  return *next;
}

std::string WhyNone(StudyRunner& r, double now = kT0, double spent = 0) {
  std::string why;
  auto next = r.PickNext(now, spent, &why);
  EXPECT_FALSE(next.has_value()) << "trial " << next->number;
  return why;
}

// A report decided and then applied, with the state change the Coordinator makes for it.
search::Decision Report(StudyRunner& r, int64_t number, int64_t epoch, double value,
                        double now = kT0, double spent = 0) {
  search::Decision d = r.Decide(number, epoch, value, now, spent);
  r.ApplyReport(number, epoch, value);
  if (d.action == Action::kStop) r.ApplyState(number, TrialState::kStopped);
  if (d.action == Action::kPause) r.ApplyState(number, TrialState::kPaused);
  if (d.action == Action::kContinue && epoch >= r.config().budget.max_epochs) {
    r.ApplyState(number, TrialState::kCompleted);
  }
  return d;
}

TEST(StudyRunnerTest, NewTrialsComeFromTheSpaceUpToMaxTrials) {
  StudyRunner r(1, Config("budget: {max_trials: 3, max_epochs: 2}\n"), kT0);
  for (int64_t n = 0; n < 3; ++n) {
    const NextTrial t = Lease(r);
    EXPECT_EQ(t.number, n);
    EXPECT_TRUE(t.is_new);
    EXPECT_EQ(t.start_epoch, 0);
    const double lr = std::get<double>(t.params.at("lr"));
    const int64_t hidden = std::get<int64_t>(t.params.at("hidden"));
    EXPECT_GE(lr, 0.0001);
    EXPECT_LE(lr, 0.1);
    EXPECT_GE(hidden, 16);
    EXPECT_LE(hidden, 256);
  }
  EXPECT_EQ(WhyNone(r), "budget: all 3 trials created");
  EXPECT_EQ(r.CountInState(TrialState::kRunning), 3);
  std::string reason;
  EXPECT_FALSE(r.Finished(kT0, 0, &reason));  // trials still run
  for (int64_t n = 0; n < 3; ++n) {
    EXPECT_EQ(Report(r, n, 1, 0.5).action, Action::kContinue);
    EXPECT_EQ(Report(r, n, 2, 0.6).action, Action::kContinue);
  }
  EXPECT_EQ(r.CountInState(TrialState::kCompleted), 3);
  EXPECT_TRUE(r.Finished(kT0, 0, &reason));
  EXPECT_EQ(reason, "all 3 trials finished");
}

// enqueue: the configurations listed run first, in order, the partial one completed; a rebuilt
// runner (a restarted coordinator) proposes the same.
TEST(StudyRunnerTest, EnqueuedConfigurationsRunFirst) {
  const std::string extra =
      "budget: {max_trials: 4, max_epochs: 2}\n"
      "searcher: {type: tpe}\n"
      "enqueue:\n  - {lr: 0.01, hidden: 64}\n  - {hidden: 32}\n";
  StudyRunner r(1, Config(extra), kT0);
  const NextTrial first = Lease(r);
  EXPECT_EQ(first.params, (search::Params{{"lr", 0.01}, {"hidden", int64_t{64}}}));
  const NextTrial second = Lease(r);
  EXPECT_EQ(second.params.at("hidden"), search::ParamValue(int64_t{32}));
  StudyRunner again(1, Config(extra), kT0);
  EXPECT_EQ(Lease(again).params, first.params);
  EXPECT_EQ(Lease(again).params, second.params);
  const NextTrial third = Lease(r);
  EXPECT_EQ(third.number, 2);
  EXPECT_EQ(third.params, Lease(again).params);
}

// The counts per state and the requeued trials are kept as states change (PickNext and Finished
// read them on every acquisition): they must equal a walk over the trials after every change,
// a Restore and a Rebuild, and the lowest-numbered requeued trial goes first.
TEST(StudyRunnerTest, KeptCountsAndRequeuedTrialsEqualAWalkAfterEveryChange) {
  StudyRunner r(1, Config("budget: {max_trials: 8, max_epochs: 3}\n"), kT0);
  auto expect_counts = [&](const char* when) {
    for (TrialState s :
         {TrialState::kPending, TrialState::kRunning, TrialState::kPaused, TrialState::kCompleted,
          TrialState::kStopped, TrialState::kFailed, TrialState::kDiverged}) {
      int64_t walked = 0;
      for (const auto& t : r.view().trials) walked += t.state == s;
      EXPECT_EQ(r.CountInState(s), walked) << when << ": " << search::ToString(s);
    }
  };
  for (int i = 0; i < 6; ++i) Lease(r);
  expect_counts("leased");
  r.ApplyState(4, TrialState::kPending);  // lost leases, requeued
  r.ApplyState(1, TrialState::kPending);
  r.ApplyState(2, TrialState::kFailed);
  Report(r, 0, 1, 0.5);
  expect_counts("requeued");
  EXPECT_EQ(Lease(r).number, 1);  // the lowest requeued number first
  EXPECT_EQ(Lease(r).number, 4);
  EXPECT_TRUE(Lease(r).is_new);
  expect_counts("resumed");
  std::vector<TrialRecord> trials;
  for (const auto& t : r.view().trials) {
    TrialRecord rec;
    rec.study_id = 1;
    rec.number = t.number;
    rec.params = t.params;
    rec.state = t.number == 3 ? TrialState::kPending : t.state;
    trials.push_back(rec);
  }
  r.Rebuild(trials, {});
  expect_counts("rebuilt");
  EXPECT_EQ(Lease(r).number, 3);
  StudyRunner restored(1, Config("budget: {max_trials: 8, max_epochs: 3}\n"), kT0);
  restored.Restore(trials, {});
  EXPECT_EQ(restored.CountInState(TrialState::kPending), 1);
  EXPECT_EQ(restored.CountInState(TrialState::kFailed), 1);
  std::string reason;
  EXPECT_FALSE(restored.Finished(kT0, 0, &reason));
}

TEST(StudyRunnerTest, FifoContinuesAndSaysWhenMaxEpochsAreReached) {
  StudyRunner r(1, Config("budget: {max_trials: 1, max_epochs: 3}\n"), kT0);
  Lease(r);
  EXPECT_EQ(Report(r, 0, 1, 0.1).reason, "");
  EXPECT_EQ(Report(r, 0, 2, 0.2).reason, "");
  const auto last = Report(r, 0, 3, 0.3);
  EXPECT_EQ(last.action, Action::kContinue);
  EXPECT_EQ(last.reason, "max epochs reached (3)");
}

TEST(StudyRunnerTest, DecideLeavesTheHistoryAsItWas) {
  // The Coordinator applies a report only after the Store holds it: deciding changes nothing.
  StudyRunner r(1, Config("budget: {max_trials: 2, max_epochs: 4}\n"), kT0);
  Lease(r);
  r.ApplyReport(0, 1, 0.4);
  r.Decide(0, 2, 0.5, kT0, 0);
  EXPECT_EQ(r.view().trials[0].values, (search::CurveValues{{1, 0.4}}));
  r.Decide(0, 1, 0.9, kT0, 0);  // a value for an epoch it holds already: the old one stays
  EXPECT_EQ(r.view().trials[0].values, (search::CurveValues{{1, 0.4}}));
}

TEST(StudyRunnerTest, RequeuedTrialsGoFirstAndResumeWhereTheyWere) {
  StudyRunner r(1, Config("budget: {max_trials: 5, max_epochs: 5}\n"), kT0);
  Lease(r);
  Lease(r);
  Report(r, 0, 1, 0.3);
  Report(r, 0, 2, 0.4);
  r.ApplyState(0, TrialState::kPending);  // its lease was lost
  const NextTrial again = Lease(r);
  EXPECT_EQ(again.number, 0);
  EXPECT_FALSE(again.is_new);
  EXPECT_EQ(again.start_epoch, 2);
  EXPECT_EQ(again.params, r.view().trials[0].params);
  EXPECT_EQ(Lease(r).number, 2);  // then new work
}

TEST(StudyRunnerTest, ParallelismCapsRunningTrials) {
  StudyRunner r(1, Config("budget: {max_trials: 5, max_epochs: 2}\nparallelism: 2\n"), kT0);
  Lease(r);
  Lease(r);
  std::string why;
  EXPECT_FALSE(r.PickNext(kT0, 0, &why).has_value());
  EXPECT_EQ(why, "");  // not a reason to end the study: wait
  Report(r, 0, 1, 0.5);
  Report(r, 0, 2, 0.5);
  EXPECT_EQ(Lease(r).number, 2);
}

TEST(StudyRunnerTest, SpentDollarBudgetStopsTrialsAndEndsTheStudy) {
  StudyRunner r(1, Config("budget: {max_trials: 10, max_epochs: 3, max_dollars: 1.0}\n"), kT0);
  Lease(r);
  EXPECT_EQ(Report(r, 0, 1, 0.5, kT0, 0.99).action, Action::kContinue);
  const auto over = r.Decide(0, 2, 0.6, kT0, 1.0);
  EXPECT_EQ(over.action, Action::kStop);
  EXPECT_EQ(over.reason, "budget: $1.0000 spent of $1.0000");
  // The last epoch is not cut short: it is trained and paid for already.
  EXPECT_EQ(r.Decide(0, 3, 0.6, kT0, 5.0).action, Action::kContinue);
  EXPECT_EQ(WhyNone(r, kT0, 1.0), "budget: $1.0000 spent of $1.0000");
  r.ApplyState(0, TrialState::kStopped);
  std::string reason;
  EXPECT_TRUE(r.Finished(kT0, 1.0, &reason));
  EXPECT_EQ(reason, "budget: $1.0000 spent of $1.0000");
  // With the budget raised, the study goes on.
  common::BudgetConfig more = r.config().budget;
  more.max_dollars = 3;
  r.ApplyBudget(more);
  EXPECT_FALSE(r.Finished(kT0, 1.0, &reason));
  EXPECT_EQ(Lease(r, kT0, 1.0).number, 1);
}

TEST(StudyRunnerTest, NoNewTrialWhoseNextEpochWouldOvershootTheDollarBudget) {
  StudyRunner r(1, Config("budget: {max_trials: 10, max_epochs: 5, max_dollars: 1.0}\n"), kT0);
  Lease(r);
  Report(r, 0, 1, 0.5);
  r.ApplyCost(0, 0.3, 60);  // measured: $0.30 per epoch
  // One running trial and a new one: about $0.60 more before either can be stopped.
  EXPECT_EQ(Lease(r, kT0, 0.4).number, 1);
  r.ApplyState(1, TrialState::kCompleted);
  EXPECT_EQ(WhyNone(r, kT0, 0.5),
            "budget: $0.5000 spent of $1.0000; another trial's next epoch (~$0.3000 each) would "
            "overshoot");
  // A running trial is not stopped for it: only new work is held back.
  EXPECT_EQ(r.Decide(0, 2, 0.6, kT0, 0.5).action, Action::kContinue);
  r.ApplyState(0, TrialState::kCompleted);
  // Nothing runs now: one more trial's epoch fits $0.50 spent, not $0.80; without room for one
  // the study is over.
  std::string reason;
  EXPECT_FALSE(r.Finished(kT0, 0.5, &reason));
  EXPECT_TRUE(r.Finished(kT0, 0.8, &reason));
  EXPECT_EQ(reason,
            "budget: $0.8000 spent of $1.0000; another trial's next epoch (~$0.3000 each) would "
            "overshoot");
}

TEST(StudyRunnerTest, HoursBudgetCountsWallTimeButNotPauses) {
  StudyRunner r(1, Config("budget: {max_trials: 10, max_epochs: 3, max_hours: 1}\n"), kT0);
  Lease(r, kT0 + 3599);
  EXPECT_EQ(WhyNone(r, kT0 + 3600), "budget: 1.00 h elapsed of 1.00 h");
  const auto d = r.Decide(0, 1, 0.5, kT0 + 3600, 0);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "budget: 1.00 h elapsed of 1.00 h");

  StudyRunner paused(2, Config("budget: {max_trials: 10, max_epochs: 3, max_hours: 1}\n"), kT0);
  paused.NotePaused(kT0 + 600);
  paused.NoteResumed(kT0 + 1800);  // 20 minutes that do not count
  Lease(paused, kT0 + 3600);
  Lease(paused, kT0 + 4799);
  EXPECT_EQ(WhyNone(paused, kT0 + 4800), "budget: 1.00 h elapsed of 1.00 h");
  paused.NoteResumed(kT0 + 5000);  // a resume without a pause adds nothing
  EXPECT_EQ(WhyNone(paused, kT0 + 4800), "budget: 1.00 h elapsed of 1.00 h");
}

TEST(StudyRunnerTest, ASpentQuotaLimitsTheStudyAsItsOwnBudgetWould) {
  StudyRunner r(1, Config("budget: {max_trials: 10, max_epochs: 3}\n"), kT0);
  Lease(r);
  r.SetQuotaUse({{"team=vision", 10.0, 10.0}});
  EXPECT_EQ(WhyNone(r), "quota team=vision: $10.0000 spent of $10.0000 by the studies tagged so");
  EXPECT_EQ(r.Decide(0, 1, 0.5, kT0, 0).action, Action::kStop);
  r.SetQuotaUse({{"team=vision", 10.0, 2.0}});
  EXPECT_EQ(r.Decide(0, 1, 0.5, kT0, 0).action, Action::kContinue);
  EXPECT_EQ(Lease(r).number, 1);
}

TEST(StudyRunnerTest, ACancelledStudyStopsEveryReportAndLeasesNothing) {
  StudyRunner r(1, Config("budget: {max_trials: 10, max_epochs: 3}\n"), kT0);
  Lease(r);
  r.ApplyStudyState(StudyState::kCancelled, "cancelled by alice");
  const auto d = r.Decide(0, 1, 0.5, kT0, 0);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "study cancelled");
  EXPECT_EQ(WhyNone(r), "");
  std::string reason;
  EXPECT_TRUE(r.Finished(kT0, 0, &reason));
  EXPECT_EQ(reason, "cancelled by alice");
  // Paused: nothing is leased, running trials report on.
  StudyRunner p(2, Config("budget: {max_trials: 10, max_epochs: 3}\n"), kT0);
  Lease(p);
  p.ApplyStudyState(StudyState::kPaused, "");
  EXPECT_EQ(WhyNone(p), "");
  EXPECT_EQ(p.Decide(0, 1, 0.5, kT0, 0).action, Action::kContinue);
}

TEST(StudyRunnerTest, AshaStopsTrialsBelowTheRungCutoff) {
  StudyRunner r(1,
                Config("scheduler: {type: asha, eta: 2, min_resource: 1}\n"
                       "budget: {max_trials: 4, max_epochs: 4}\n"),
                kT0);
  Lease(r);
  Lease(r);
  EXPECT_EQ(Report(r, 0, 1, 0.8).action, Action::kContinue);
  const auto worse = Report(r, 1, 1, 0.2);
  EXPECT_EQ(worse.action, Action::kStop);
  EXPECT_EQ(worse.reason, "asha: below rung 0 (epoch 1) cutoff 0.8 (top 1/2 of 2 trials)");
  EXPECT_EQ(r.view().trials[1].state, TrialState::kStopped);
}

TEST(StudyRunnerTest, PromotionPausesATrialAndResumesItWhenItIsPromoted) {
  StudyRunner r(1,
                Config("scheduler: {type: asha, eta: 2, min_resource: 1, variant: promotion}\n"
                       "budget: {max_trials: 4, max_epochs: 4}\n"),
                kT0);
  Lease(r);
  const auto first = Report(r, 0, 1, 0.3);  // alone at the rung: not in its top half yet
  EXPECT_EQ(first.action, Action::kPause);
  EXPECT_EQ(first.reason, "asha: paused at rung 0 (epoch 1): not in the top 0 of 1 (top 1/2)");
  EXPECT_EQ(r.view().trials[0].state, TrialState::kPaused);
  Lease(r);
  EXPECT_EQ(Report(r, 1, 1, 0.1).action, Action::kPause);  // worse than trial 0
  // Two trials at the rung: the best one is promoted before any new trial is made, and resumes
  // at the epoch it reached.
  const NextTrial promoted = Lease(r);
  EXPECT_EQ(promoted.number, 0);
  EXPECT_FALSE(promoted.is_new);
  EXPECT_EQ(promoted.start_epoch, 1);
  std::string reason;
  EXPECT_FALSE(r.Finished(kT0, 0, &reason));
  EXPECT_EQ(Lease(r).number, 2);  // trial 1 stays paused: not in the top half
}

TEST(StudyRunnerTest, RestoreRefusesAGapInTrialNumbers) {
  StudyRunner r(1, Config(""), kT0);
  TrialRecord a, b;
  a.number = 0;
  b.number = 2;
  EXPECT_THROW(r.Restore({a, b}, {}), std::runtime_error);
}

TEST(StudyRunnerTest, RestoreKeepsFiniteObjectiveValuesOnlyAndRebuildKeepsCosts) {
  StudyRunner r(1, Config(""), kT0);
  TrialRecord t;
  t.number = 0;
  t.params = {{"lr", 0.01}, {"hidden", int64_t{32}}};
  t.state = TrialState::kDiverged;
  ReportRecord ok, nan;
  ok.number = nan.number = 0;
  ok.epoch = 1;
  ok.metrics = {{"val_accuracy", 0.4}, {"val_loss", 1.0}};
  nan.epoch = 2;
  nan.metrics = {{"val_accuracy", std::nan("")}};
  r.Restore({t}, {ok, nan});
  // Costs come from the ledger (coordinator/cost/ledger.h): its closed segments' charge.
  r.ApplyCost(0, 2.0, 3600);
  ASSERT_EQ(r.view().trials.size(), 1u);
  const auto& v = r.view().trials[0];
  EXPECT_EQ(v.state, TrialState::kDiverged);
  EXPECT_EQ(v.params, t.params);
  EXPECT_EQ(v.values, (search::CurveValues{{1, 0.4}}));
  EXPECT_DOUBLE_EQ(v.cost_dollars, 2.0);
  EXPECT_DOUBLE_EQ(v.train_seconds, 3600);
  // Rebuild rereads the history and keeps the costs.
  ok.metrics["val_accuracy"] = 0.7;
  r.Rebuild({t}, {ok});
  EXPECT_EQ(r.view().trials[0].values, (search::CurveValues{{1, 0.7}}));
  EXPECT_DOUBLE_EQ(r.view().trials[0].cost_dollars, 2.0);
}

// ---- A runner rebuilt from the Store's history decides as the one that lived through it.

// Drives a runner as the Coordinator would, with `workers` trials at a time reporting in turn,
// keeping what the Store would hold, and writing down every pick and decision.
class Drive {
 public:
  Drive(const common::StudyConfig& config, int workers) : config_(config), workers_(workers) {
    runner_ = std::make_unique<StudyRunner>(7, config_, kT0);
  }

  // One round: leases fill free workers, then each running trial reports its next epoch.
  // False once the study is finished.
  bool Step() {
    std::string why;
    while (static_cast<int>(running_.size()) < workers_) {
      auto next = runner_->PickNext(now_, 0, &why);
      if (!next) break;
      if (next->is_new) {
        runner_->ApplyNewTrial(next->number, next->params);
        TrialRecord t;
        t.study_id = 7;
        t.number = next->number;
        t.params = next->params;
        trials_.push_back(t);
      }
      SetState(next->number, TrialState::kRunning);
      running_.push_back(next->number);
      trace_ += "lease " + std::to_string(next->number) + " " + search::ToString(next->params) +
                " at " + std::to_string(next->start_epoch) + "\n";
    }
    if (running_.empty()) {
      std::string reason;
      return !runner_->Finished(now_, 0, &reason);
    }
    std::vector<int64_t> still;
    for (int64_t n : running_) {
      const auto& t = runner_->view().trials[n];
      const int64_t epoch = t.LastResource() + 1;
      const double value = Value(t.params, epoch);
      now_ += 1;
      const search::Decision d = runner_->Decide(n, epoch, value, now_, 0);
      runner_->ApplyReport(n, epoch, value);
      ReportRecord r;
      r.study_id = 7;
      r.number = n;
      r.epoch = epoch;
      r.metrics = {{"val_accuracy", value}};
      reports_.push_back(r);
      trace_ += "report " + std::to_string(n) + " e" + std::to_string(epoch) + " " +
                search::ToString(d.action) + " " + d.reason + "\n";
      if (d.action == Action::kStop) {
        SetState(n, TrialState::kStopped);
      } else if (d.action == Action::kPause) {
        SetState(n, TrialState::kPaused);
      } else if (epoch >= config_.budget.max_epochs) {
        SetState(n, TrialState::kCompleted);
      } else {
        still.push_back(n);
      }
    }
    running_ = still;
    return true;
  }

  // A coordinator restart: a new runner from what the Store holds.
  void Restart() {
    runner_ = std::make_unique<StudyRunner>(7, config_, kT0);
    runner_->Restore(trials_, reports_);
  }
  // A failed write: the same runner starts its history over from the Store.
  void Reread() { runner_->Rebuild(trials_, reports_); }

  const std::string& trace() const { return trace_; }
  size_t trials() const { return trials_.size(); }

 private:
  // A made-up learning curve: better with lr near 0.01 and more hidden units, rising per epoch.
  static double Value(const search::Params& p, int64_t epoch) {
    const double lr = std::get<double>(p.at("lr"));
    const double hidden = static_cast<double>(std::get<int64_t>(p.at("hidden")));
    const double quality = 1.0 / (1.0 + std::pow(std::log10(lr) + 2.0, 2)) * (0.5 + hidden / 512);
    return quality * (1.0 - std::pow(0.6, static_cast<double>(epoch)));
  }

  void SetState(int64_t number, TrialState state) {
    runner_->ApplyState(number, state);
    trials_[number].state = state;
  }

  common::StudyConfig config_;
  int workers_;
  std::unique_ptr<StudyRunner> runner_;
  std::vector<TrialRecord> trials_;
  std::vector<ReportRecord> reports_;
  std::vector<int64_t> running_;
  double now_ = kT0;
  std::string trace_;
};

struct Algorithms {
  const char* searcher;
  const char* scheduler;
  const char* must_decide;  // a decision the scheduler takes at least once in this study
};

void PrintTo(const Algorithms& a, std::ostream* os) { *os << a.searcher << " / " << a.scheduler; }

class StudyRunnerReplayTest : public ::testing::TestWithParam<Algorithms> {
 protected:
  common::StudyConfig Study() const {
    return Config(std::string("searcher: ") + GetParam().searcher + "\nscheduler: " +
                  GetParam().scheduler + "\nbudget: {max_trials: 24, max_epochs: 9}\n");
  }
};

TEST_P(StudyRunnerReplayTest, ARunnerRebuiltFromTheHistoryDecidesTheSame) {
  Drive lived(Study(), 3);
  int steps = 0;
  while (lived.Step()) ASSERT_LT(++steps, 1000);
  ASSERT_EQ(lived.trials(), 24u);
  EXPECT_NE(lived.trace().find(GetParam().must_decide), std::string::npos) << lived.trace();

  // Restarted (and reread) at several points, one after another: the same leases, the same
  // parameters and the same decisions with the same reasons, to the end.
  Drive restarted(Study(), 3), reread(Study(), 3);
  for (int i = 0; i < steps; ++i) {
    if (i % 7 == 3) restarted.Restart();
    if (i % 5 == 2) reread.Reread();
    restarted.Step();
    reread.Step();
  }
  EXPECT_FALSE(restarted.Step());
  EXPECT_FALSE(reread.Step());
  EXPECT_EQ(restarted.trace(), lived.trace());
  EXPECT_EQ(reread.trace(), lived.trace());
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, StudyRunnerReplayTest,
    ::testing::Values(Algorithms{"random", "fifo", "max epochs reached"},
                      Algorithms{"random", "{type: asha, eta: 3}", " STOP asha: below rung"},
                      Algorithms{"tpe", "{type: asha, eta: 3, variant: promotion}", " PAUSE "},
                      Algorithms{"bohb", "{type: hyperband, eta: 3, variant: promotion}",
                                 " PAUSE hyperband bracket"},
                      Algorithms{"sobol", "{type: median, min_trials: 2}", " STOP "},
                      Algorithms{"gp", "{type: plateau, patience: 2, min_delta: 0.01}", " STOP "}),
    [](const auto& info) {
      std::string name = std::string(info.param.searcher) + "_" + info.param.scheduler;
      std::string out;
      for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)))
          out += c;
        else if (!out.empty() && out.back() != '_')
          out += '_';
      }
      while (!out.empty() && out.back() == '_') out.pop_back();
      return out;
    });

}  // namespace study_runner_test
}  // namespace sift::coordinator

// The Coordinator without gRPC: idle and lost workers, unrunnable studies, pauses and budget
// changes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "common/checkpoint_names.h"
#include "tests/coordinator/core/coordinator_test.h"

namespace sift::coordinator {
namespace coordinator_workers_test {

using search::Action;
using search::TrialState;

AcquireResult AcquireOnly(Coordinator& c, const std::string& w, double idle_exit_s,
                          Assignment* a = nullptr) {
  AcquireResult r;
  Assignment ignored;
  EXPECT_TRUE(c.AcquireTrial(w, &r, a ? a : &ignored, idle_exit_s).ok());
  return r;
}

TEST_F(CoordinatorTest, StandaloneTellsAnIdleWorkerToLeaveAfterItsGraceEvenWithNoStudy) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker();  // $0.001 per second
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kNoWork);
  clock_.Advance(4);
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kNoWork);
  // A worker that did not ask for an idle exit keeps waiting.
  const std::string patient = Worker();
  clock_.Advance(1);
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kShutdown);
  EXPECT_EQ(AcquireOnly(*c_, patient, 0), AcquireResult::kNoWork);
  clock_.Advance(100);
  EXPECT_EQ(AcquireOnly(*c_, patient, 0), AcquireResult::kNoWork);
}

// Issue 11: memory must stay bounded under hostile calls. Registrations were not (each stayed in
// memory for good): of the workers silent past the lease timeout, only the 1,000 heard from last
// (WorkerTable's max_lost) are remembered. A live worker, or one holding a lease, never is
// forgotten; a forgotten one is told to register again.
TEST_F(CoordinatorTest, OnlyTheLostWorkersHeardFromLastAreRemembered) {
  c_.reset();
  Open(/*embedded=*/false);
  const int64_t id = Study(Config("{type: fifo}", 1, 3));
  const std::string holder = Worker();
  Assignment a = Acquire(holder);
  EXPECT_EQ(a.study_id, id);
  std::vector<std::string> silent;
  for (int i = 0; i < 1003; ++i) {
    silent.push_back(Worker());
    clock_.Advance(0.001);
  }
  const std::string live = Worker();
  std::vector<std::string> revoked;
  for (int i = 0; i < 10; ++i) {  // beats keep the holder's lease, the live one asks for work
    clock_.Advance(1.5);
    ASSERT_TRUE(c_->Heartbeat(holder, {a.lease_id}, &revoked).ok());
    EXPECT_EQ(AcquireOnly(*c_, live, 0), AcquireResult::kNoWork);
    c_->Tick();
  }
  // The three silent longest are forgotten, the next ones kept.
  for (int i = 0; i < 6; ++i) {
    Assignment ignored;
    AcquireResult r;
    const Status s = c_->AcquireTrial(silent[i], &r, &ignored, 0);
    EXPECT_EQ(s.code, i < 3 ? Status::Code::kNotFound : Status::Code::kOk) << i << s.message;
    if (i < 3) {
      EXPECT_NE(s.message.find("register first"), std::string::npos) << s.message;
    }
  }
  EXPECT_EQ(AcquireOnly(*c_, live, 0), AcquireResult::kNoWork);
  Report(holder, a, 1, 1, 0.5);
}

TEST_F(CoordinatorTest, IdleTimeAfterAStudysTrialsIsBilledToNoTrialAndReportedWithTheStudy) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker();  // $0.001 per second
  const int64_t id = Study(Config("{type: fifo}", 1, 1));
  Assignment a;
  ASSERT_EQ(AcquireOnly(*c_, w, 30, &a), AcquireResult::kAssigned);
  clock_.Advance(10);
  Report(w, a, 1, 1, 0.7, /*checkpointed=*/false);  // no model to score: no evaluation after
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kNoWork);  // the idle stretch opens
  clock_.Advance(29);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kNoWork);
  clock_.Advance(1);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kShutdown);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_NEAR(s.idle_seconds, 30, 1e-6);
  EXPECT_NEAR(s.idle_dollars, 0.030, 1e-9);
  EXPECT_NEAR(s.dollars, 0.010, 1e-9);  // the study's own cost is only its lease
  // It is in the database, so a restarted coordinator and `sift report` see it too.
  c_.reset();
  Open(/*embedded=*/false);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_NEAR(s.idle_seconds, 30, 1e-6);
}

TEST_F(CoordinatorTest, AStudyInWhichEveryTrialFailedEndsFailed) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  for (int i = 0; i < 2; ++i) {
    Assignment a = Acquire(w);
    ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "cannot decode train-images").ok());
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kFailed);
  EXPECT_NE(s.record.end_reason.find("every trial failed (2 of 2)"), std::string::npos)
      << s.record.end_reason;
  EXPECT_NE(s.record.end_reason.find("cannot decode train-images"), std::string::npos)
      << s.record.end_reason;
}

TEST_F(CoordinatorTest, AWorkerThatCannotRunAStudyHandsTheTrialBackUnfailedAndGetsNoMore) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker(), other = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "data.dir '/nope': no such directory",
                            /*worker_cannot_run=*/true)
                  .ok());
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].record.state, TrialState::kPending);
  EXPECT_NE(trials[0].record.end_reason.find("cannot run it: data.dir '/nope'"), std::string::npos);
  EXPECT_EQ(AcquireOnly(*c_, w, 0), AcquireResult::kNoWork);  // barred from the study
  Assignment b = Acquire(other);  // a worker that has the data gets the same trial
  EXPECT_EQ(b.number, a.number);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kRunning);
}

TEST_F(CoordinatorTest, EmbeddedStudyThatNoLiveWorkerCanRunEndsFailed) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "data.dir '/nope': no such directory", true).ok());
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kFailed);
  EXPECT_NE(s.record.end_reason.find("no worker can run its trials"), std::string::npos);
  EXPECT_EQ(AcquireOnly(*c_, w, 0), AcquireResult::kShutdown);
}

// Study control (pause, resume, budget, audit trail): what `sift pause/resume/budget` and a
// Ctrl-C on `sift run` do to a study.

std::vector<std::string> Actions(const StudySummary& s) {
  std::vector<std::string> out;
  for (const auto& e : s.events) out.push_back(e.user + " " + e.action);
  return out;
}

TEST_F(CoordinatorTest, APausedStudyHandsOutNothingAndItsTrialsHandBackAtTheirNextEpoch) {
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  EXPECT_EQ(Report(w, a, 1, 1, 0.5).action, Action::kContinue);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "by hand").ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(Worker(), &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kNoWork);  // not kShutdown: a paused study can be resumed
  EXPECT_FALSE(c_->AllStudiesFinished());
  const search::Decision d = Report(w, a, 2, 2, 0.6);
  EXPECT_EQ(d.action, Action::kPause);
  EXPECT_EQ(d.reason, "study paused");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}, common::EpochCheckpointName(a.number, 2)).ok());
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  EXPECT_EQ(trials.at(0).record.state, TrialState::kPending);  // not parked at a rung
  EXPECT_EQ(trials.at(0).interruptions, 0);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kPaused);
  EXPECT_EQ(s.record.end_reason, "paused by alice (by hand)");
  EXPECT_EQ(s.preemptions, 0);
  // Resumed, the trial continues after its last recorded epoch, from that epoch's checkpoint.
  ASSERT_TRUE(c_->ResumeStudy(id, "bob").ok());
  Assignment again = Acquire(w);
  EXPECT_EQ(again.number, a.number);
  EXPECT_EQ(again.start_epoch, 2);
  EXPECT_EQ(again.resume_checkpoint, common::EpochCheckpointName(a.number, 2));
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(Actions(s),
            std::vector<std::string>({"unknown created", "alice paused", "bob resumed"}));
  // Pausing twice is a no-op; an ended study can be neither paused nor resumed.
  ASSERT_TRUE(c_->CancelStudy(id, "carol").ok());
  EXPECT_EQ(c_->PauseStudy(id, "alice").code, Status::Code::kFailedPrecondition);
  EXPECT_EQ(c_->ResumeStudy(id, "alice").code, Status::Code::kFailedPrecondition);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(Actions(s).back(), "carol cancelled");
}

TEST_F(CoordinatorTest, AWorkerStoppedByAPauseIsNoPreemptionAndItsTrialResumesAfterARestart) {
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.5);
  Assignment b = Acquire(w);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "SIGINT").ok());
  // Worker a checkpoints mid-epoch and hands back (SIGTERM from `sift run`); b is killed.
  const std::string mid = common::PreemptCheckpointName(a.number, 1, 7);
  ASSERT_TRUE(c_->PreemptTrial(w, a.lease_id, mid, "SIGTERM").ok());
  clock_.Advance(4);
  EXPECT_EQ(c_->InterruptLeases(id), 1);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.preemptions, 0);
  EXPECT_EQ(s.expirations, 0);
  EXPECT_EQ(s.running, 0);
  EXPECT_GT(s.wasted_dollars, 0.0);  // b's four seconds since it started are lost work
  c_.reset();
  Open();
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kPaused);
  ASSERT_TRUE(c_->ResumeStudy(id, "alice", "sift run").ok());
  Assignment first = Acquire(w);
  EXPECT_EQ(first.number, a.number);
  EXPECT_EQ(first.start_epoch, 1);
  EXPECT_EQ(first.resume_checkpoint, mid);
  EXPECT_EQ(Acquire(w).number, b.number);
}

TEST_F(CoordinatorTest, BudgetChangesAreCheckedApplyToTheNextWorkAndSurviveARestart) {
  const int64_t id = Study(Config("{type: fifo}", 4, 1));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  auto problem = [&](BudgetChange c) { return c_->UpdateBudget(id, c, "alice").message; };
  EXPECT_EQ(problem({}), "nothing to change: give max_dollars, max_hours or max_trials");
  EXPECT_EQ(problem({-1.0, std::nullopt, std::nullopt}),
            "max_dollars: must be a number > 0, got -1");
  EXPECT_EQ(problem({std::nullopt, 0.0, std::nullopt}), "max_hours: must be a number > 0, got 0");
  EXPECT_EQ(problem({std::nullopt, std::nullopt, 0}), "max_trials: must be >= 1, got 0");
  EXPECT_EQ(c_->UpdateBudget(id, {std::nullopt, std::nullopt, 0}, "alice").code,
            Status::Code::kInvalidArgument);
  EXPECT_EQ(c_->UpdateBudget(99, {5.0, std::nullopt, std::nullopt}, "alice").code,
            Status::Code::kNotFound);
  ASSERT_TRUE(c_->UpdateBudget(id, {5.0, std::nullopt, 2}, "alice").ok());
  c_.reset();
  Open();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.budget.max_trials, 2);
  EXPECT_EQ(s.max_trials, 2);
  EXPECT_EQ(s.budget.max_dollars, 5.0);
  EXPECT_EQ(Actions(s), std::vector<std::string>({"unknown created", "alice budget"}));
  EXPECT_EQ(s.events.back().detail, R"({"max_dollars":5.0,"max_trials":2})");
  // Two trials, not the config's four: the second is the last one handed out.
  Report(w, a, 1, 1, 0.5);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  Assignment b = Acquire(w);
  EXPECT_EQ(problem({std::nullopt, std::nullopt, 1}),
            "max_trials: 1 is fewer than the 2 trials already created");
  Report(w, b, 1, 1, 0.6);
  ASSERT_TRUE(c_->CompleteTrial(w, b.lease_id, {}).ok());
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(s.record.end_reason, "all 2 trials finished");
  EXPECT_EQ(c_->UpdateBudget(id, {std::nullopt, std::nullopt, 3}, "alice").code,
            Status::Code::kFailedPrecondition);
}

TEST_F(CoordinatorTest, PausedTimeDoesNotCountAgainstMaxHoursAcrossARestart) {
  const int64_t id = Study(Config("{type: fifo}", 3, 1, ", max_hours: 1"));
  const std::string w = Worker();
  clock_.Advance(1800);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "SIGHUP").ok());
  clock_.Advance(3 * 3600);  // overnight
  c_.reset();
  Open();
  ASSERT_TRUE(c_->ResumeStudy(id, "alice").ok());
  Acquire(w);  // 30 minutes of the hour spent, not three and a half hours
  clock_.Advance(1801);
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kNoWork);  // now the hour is up
}

}  // namespace coordinator_workers_test
}  // namespace sift::coordinator

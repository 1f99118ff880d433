// The Coordinator without gRPC: checkpoint retention, resume points and diverging trials.
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
namespace coordinator_checkpoints_test {

using search::Action;
using search::TrialState;

TEST_F(CoordinatorTest, LatestKeepsEachTrialsResumePointAndNothingItSupersedes) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 4));  // checkpoint.keep defaults to latest
  Assignment a = Acquire(w1);
  for (int epoch = 1; epoch <= 2; ++epoch) {
    WriteCheckpoint(id, common::EpochCheckpointName(0, epoch));
    Report(w1, a, epoch, epoch, 0.5 + 0.1 * epoch);
  }
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e2.ckpt"}));
  // Epoch 3 is written but its VM is lost before reporting it: the file waits, unrecorded.
  WriteCheckpoint(id, "trial-0-e3.ckpt");
  clock_.Advance(11);
  c_->Tick();
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e2.ckpt", "trial-0-e3.ckpt"}));
  Assignment b = Acquire(w2);
  ASSERT_EQ(b.resume_checkpoint, "trial-0-e2.ckpt");  // still there to resume from
  WriteCheckpoint(id, "trial-0-e3.ckpt");             // retrained, and now reported
  Report(w2, b, 1, 3, 0.8);
  WriteCheckpoint(id, "trial-0-e4.ckpt");
  Report(w2, b, 2, 4, 0.85);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e4.ckpt"}))
      << "a finished trial keeps its final model";
}

TEST_F(CoordinatorTest, BestKeepsOnlyTheBestFinishedTrialsModel) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 3, 1) + "checkpoint: {keep: best}\n");
  for (double acc : {0.7, 0.9, 0.8}) {
    Assignment a = Acquire(w);
    WriteCheckpoint(id, common::EpochCheckpointName(a.number, 1));
    Report(w, a, 1, 1, acc);
    // Until its lease ends a trial keeps its checkpoint, whatever its value.
    EXPECT_EQ(Checkpoints(id).back(), common::EpochCheckpointName(a.number, 1));
    ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.best_trial, 1);
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-1-e1.ckpt"}));
}

TEST_F(CoordinatorTest, AllKeepsEveryCheckpointAndARestartPrunesUnderTheStudysPolicy) {
  const std::string w = Worker();
  const int64_t keep_all = Study(Config("{type: fifo}", 1, 3) + "checkpoint: {keep: all}\n");
  Assignment a = Acquire(w);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    WriteCheckpoint(keep_all, common::EpochCheckpointName(0, epoch));
    Report(w, a, epoch, epoch, 0.5);
  }
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  EXPECT_EQ(Checkpoints(keep_all).size(), 3u);
  ScoreBestTrial(w);
  // Files left by an older sift (which kept everything) go once a restarted coordinator sees
  // them under a study that keeps the latest.
  const int64_t latest = Study(Config("{type: fifo}", 1, 3));
  Assignment b = Acquire(w);
  WriteCheckpoint(latest, "trial-0-e1.ckpt");
  Report(w, b, 1, 1, 0.5);
  WriteCheckpoint(latest, "trial-0-e0-s9.ckpt");
  c_.reset();
  Open();
  EXPECT_EQ(Checkpoints(latest), std::vector<std::string>({"trial-0-e1.ckpt"}));
  EXPECT_EQ(Checkpoints(keep_all).size(), 3u);
}

// A trial whose objective turns NaN ends as DIVERGED (its own outcome, with why), keeps its
// dollars, is never retried, is nobody's best, and all of it survives a restart.
TEST_F(CoordinatorTest, NonFiniteObjectiveEndsTheTrialDivergedForGood) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  Assignment a = Acquire(w);
  clock_.Advance(5);
  Report(w, a, 1, 1, 0.5);
  clock_.Advance(5);
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 2, 2,
                                 {{"val_accuracy", nan}, {"train_loss", inf}, {"val_loss", nan}},
                                 "", &d)
                  .ok());
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "val_accuracy NaN at epoch 2");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"test_accuracy", 0.1}}).ok());

  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    std::vector<TrialSummary> trials;
    ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
    EXPECT_EQ(trials[0].record.state, TrialState::kDiverged);
    EXPECT_EQ(trials[0].record.end_reason, "val_accuracy NaN at epoch 2");
    EXPECT_NEAR(trials[0].dollars, 10 * 0.001, 1e-9);  // its leased time stays on the bill
    ASSERT_EQ(trials[0].reports.size(), 2u);
    EXPECT_TRUE(std::isnan(trials[0].reports[1].metrics.at("val_accuracy")));
    EXPECT_EQ(trials[0].reports[1].metrics.at("train_loss"), inf);
    StudySummary s;
    ASSERT_TRUE(c_->GetStudy(id, &s).ok());
    EXPECT_FALSE(s.best_trial.has_value());  // 0.5 at epoch 1 is no result of a diverged trial
    EXPECT_EQ(s.finished, 1);
    // The retried report gets its first answer (the replay lookup reads NaN metrics).
    search::Decision again;
    ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 2, 2, {{"val_accuracy", nan}}, "", &again).ok());
    EXPECT_EQ(again.action, Action::kStop);
    EXPECT_EQ(again.reason, "val_accuracy NaN at epoch 2");
  };
  check("running");
  c_.reset();
  Open();
  check("after a restart");
  // Never retried: the next lease is a new trial.
  const std::string w2 = Worker();
  EXPECT_EQ(Acquire(w2).number, 1);
}

TEST_F(CoordinatorTest, NonFiniteTrainingLossEndsTheTrialUnlessStopOnDivergenceIsOff) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::string w = Worker();
  Study(Config("{type: fifo}", 1, 3));
  Assignment a = Acquire(w);
  search::Decision d;
  ASSERT_TRUE(
      c_->ReportProgress(w, a.lease_id, 1, 1, {{"val_accuracy", 0.1}, {"train_loss", -inf}}, "", &d)
          .ok());
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "train_loss -Infinity at epoch 1");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());

  std::string off = Config("{type: fifo}", 1, 3);
  off.replace(off.find("trainer: {model: mlp}"), 21,
              "trainer: {model: mlp, stop_on_divergence: false}");
  const int64_t id = Study(off);
  Assignment b = Acquire(w);
  EXPECT_EQ(b.study_id, id);
  ASSERT_TRUE(
      c_->ReportProgress(w, b.lease_id, 1, 1, {{"val_accuracy", 0.1}, {"train_loss", inf}}, "", &d)
          .ok());
  EXPECT_EQ(d.action, Action::kContinue);
}

// Damaged checkpoints: a resume is offered the older ones still on disk (newest first), and the
// work redone past a damaged one is waste in the ledger.
TEST_F(CoordinatorTest, ResumeOffersOlderCheckpointsAndRedoneWorkIsWaste) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 4) + "checkpoint: {keep: all}\n");
  Assignment a = Acquire(w1);
  for (int e = 1; e <= 3; ++e) {
    WriteCheckpoint(id, common::EpochCheckpointName(0, e));
    clock_.Advance(1);
    Report(w1, a, e, e, 0.5 + 0.1 * e);
  }
  WriteCheckpoint(id, "trial-0-e1-s3.ckpt");
  search::Decision d;
  EXPECT_EQ(
      c_->ReportProgress(w1, a.lease_id, 4, 4, {{"val_accuracy", 0.9}}, "trial-0-e-1.ckpt", &d)
          .code,
      Status::Code::kInvalidArgument);  // not a checkpoint name
  clock_.Advance(11);
  c_->Tick();  // the VM is gone
  Assignment b = Acquire(w2);
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e3.ckpt");
  EXPECT_EQ(b.resume_fallbacks,
            (std::vector<std::string>{"trial-0-e2.ckpt", "trial-0-e1-s3.ckpt", "trial-0-e1.ckpt"}));
  clock_.Advance(10);
  ASSERT_TRUE(c_->RecordRedoneWork(w2, b.lease_id, 6.0, "trial-0-e3.ckpt").ok());
  ASSERT_TRUE(c_->RecordRedoneWork(w2, b.lease_id, 6.0, "trial-0-e3.ckpt").ok());  // a retry
  EXPECT_EQ(c_->RecordRedoneWork(w1, b.lease_id, 6.0, "x").code, Status::Code::kFailedPrecondition);
  Report(w2, b, 1, 4, 0.9);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  // The lost VM wasted nothing (it had checkpointed its last epoch); the fallback redid 6 s.
  EXPECT_NEAR(trials[0].wasted_dollars, 6 * 0.001, 1e-9);
}

}  // namespace coordinator_checkpoints_test
}  // namespace sift::coordinator

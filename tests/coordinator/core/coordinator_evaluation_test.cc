// The Coordinator without gRPC: the held-out test evaluation of finished trials.
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
namespace coordinator_evaluation_test {

using search::Action;
using search::TrialState;

class EvaluationTest : public CoordinatorTest {
 protected:
  // Three one-epoch trials with val_accuracy 0.5, 0.9, 0.7: trial 1 is the best.
  int64_t FinishedStudy(const std::string& w) {
    const int64_t id = Study(Config("{type: fifo}", 3, 1));
    for (double acc : {0.5, 0.9, 0.7}) {
      Assignment a = Acquire(w);
      EXPECT_FALSE(a.evaluate_test);
      Report(w, a, 1, 1, acc);
      WriteCheckpoint(id, common::EpochCheckpointName(a.number, 1));
      EXPECT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"peak_rss_mb", 1}}).ok());
    }
    return id;
  }
  std::map<int64_t, std::optional<EvaluationRecord>> Evaluations(int64_t id) {
    std::vector<TrialSummary> trials;
    EXPECT_TRUE(c_->ListTrials(id, &trials).ok());
    std::map<int64_t, std::optional<EvaluationRecord>> out;
    for (const auto& t : trials) out[t.record.number] = t.evaluation;
    return out;
  }
};

// With a constraint, the trial scored on test is the best one that kept to it: trial 1 has the
// best val_accuracy but too many parameters.
TEST_F(EvaluationTest, TheBestTrialScoredOnTestKeptToTheConstraints) {
  const std::string w = Worker();
  const int64_t id =
      Study(Config("{type: fifo}", 3, 1) + "constraints:\n  - {metric: params, max: 1000}\n");
  const double params[] = {900, 5000, 100};
  int i = 0;
  for (double acc : {0.5, 0.9, 0.7}) {
    Assignment a = Acquire(w);
    search::Decision d;
    ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 1, 1,
                                   {{"val_accuracy", acc}, {"params", params[i++]}},
                                   common::EpochCheckpointName(a.number, 1), &d)
                    .ok());
    WriteCheckpoint(id, common::EpochCheckpointName(a.number, 1));
    ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"peak_rss_mb", 1}}).ok());
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  ASSERT_TRUE(s.best_trial.has_value());
  EXPECT_EQ(*s.best_trial, 2);
  Assignment e = Acquire(w);
  EXPECT_TRUE(e.evaluate_test);
  EXPECT_EQ(e.number, 2);
}

TEST_F(EvaluationTest, BestTrialIsScoredOnTestOnceWhenTheStudyCompletes) {
  const std::string w = Worker();
  const int64_t id = FinishedStudy(w);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_FALSE(c_->AllStudiesFinished());  // the best trial's score is still owed

  Assignment e = Acquire(w);
  EXPECT_TRUE(e.evaluate_test);
  EXPECT_EQ(e.number, 1);
  EXPECT_EQ(e.resume_checkpoint, common::EpochCheckpointName(1, 1));
  EXPECT_TRUE(e.resume_fallbacks.empty());
  EXPECT_TRUE(std::get<std::string>(e.params.at("model")) == "mlp");
  auto evals = Evaluations(id);
  ASSERT_TRUE(evals[1]);
  EXPECT_EQ(evals[1]->state, EvaluationState::kRunning);
  EXPECT_EQ(evals[1]->requested_by, "best trial");
  EXPECT_FALSE(evals[0]);
  EXPECT_FALSE(evals[2]);
  // The worker may read exactly that checkpoint, and only it.
  std::string path;
  EXPECT_TRUE(c_->CheckpointPath(w, e.lease_id, e.resume_checkpoint, &path).ok());
  EXPECT_FALSE(c_->CheckpointPath(w, e.lease_id, common::EpochCheckpointName(0, 1), &path).ok());
  std::vector<std::string> revoked;
  ASSERT_TRUE(c_->Heartbeat(w, {e.lease_id}, &revoked).ok());
  EXPECT_TRUE(revoked.empty());

  ASSERT_TRUE(c_->CompleteTrial(w, e.lease_id, {{"test_accuracy", 0.88}}).ok());
  evals = Evaluations(id);
  ASSERT_TRUE(evals[1]);
  EXPECT_EQ(evals[1]->state, EvaluationState::kDone);
  EXPECT_EQ(evals[1]->metrics.at("test_accuracy"), 0.88);
  EXPECT_FALSE(evals[0]);
  EXPECT_TRUE(c_->AllStudiesFinished());
  // Trials' own records carry no test score; asking again for the best one changes nothing.
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  for (const auto& t : trials) EXPECT_EQ(t.record.final_metrics.count("test_accuracy"), 0u);
  ASSERT_TRUE(c_->RequestEvaluation(id, 1, "me").ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kShutdown);
}

TEST_F(EvaluationTest, ALostEvaluationLeaseIsRequeuedAndARestartKeepsIt) {
  const std::string w1 = Worker();
  const int64_t id = FinishedStudy(w1);
  Assignment e = Acquire(w1);
  ASSERT_TRUE(e.evaluate_test);
  const std::string w2 = Worker();
  clock_.Advance(11);  // w1 went silent past the lease timeout
  c_->Tick();
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kPending);
  EXPECT_EQ(c_->CompleteTrial(w1, e.lease_id, {{"test_accuracy", 0.1}}).code,
            Status::Code::kFailedPrecondition);
  Assignment again = Acquire(w2);
  EXPECT_TRUE(again.evaluate_test);
  EXPECT_EQ(again.number, 1);
  // The coordinator restarts while w2 scores: the evaluation is still owed, and runs again.
  c_.reset();
  Open();
  EXPECT_FALSE(c_->AllStudiesFinished());
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kPending);
  const std::string w3 = Worker();
  Assignment third = Acquire(w3);
  EXPECT_TRUE(third.evaluate_test);
  ASSERT_TRUE(c_->CompleteTrial(w3, third.lease_id, {{"test_accuracy", 0.87}}).ok());
  c_.reset();
  Open();
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kDone);
  EXPECT_EQ(Evaluations(id)[1]->metrics.at("test_accuracy"), 0.87);
  EXPECT_TRUE(c_->AllStudiesFinished());
}

TEST_F(EvaluationTest, AnyFinishedTrialCanBeScoredOnRequestAndFailuresAreKept) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  // A running trial has no model yet.
  EXPECT_EQ(c_->RequestEvaluation(id, a.number, "me").code, Status::Code::kFailedPrecondition);
  EXPECT_EQ(c_->RequestEvaluation(id, 7, "me").code, Status::Code::kNotFound);
  EXPECT_EQ(c_->RequestEvaluation(99, 0, "me").code, Status::Code::kNotFound);
  Report(w, a, 1, 1, 0.6);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  TrialSummary t;
  ASSERT_TRUE(c_->RequestEvaluation(id, 0, "alice", &t).ok());
  ASSERT_TRUE(t.evaluation);
  EXPECT_EQ(t.evaluation->state, EvaluationState::kPending);
  EXPECT_EQ(t.evaluation->requested_by, "alice");
  // A requested evaluation goes out before the study's remaining trial.
  Assignment e = Acquire(w);
  EXPECT_TRUE(e.evaluate_test);
  EXPECT_EQ(e.number, 0);
  ASSERT_TRUE(c_->FailTrial(w, e.lease_id, "checkpoint damaged").ok());
  auto evals = Evaluations(id);
  EXPECT_EQ(evals[0]->state, EvaluationState::kFailed);
  EXPECT_EQ(evals[0]->error, "checkpoint damaged");
  // The trial itself is untouched by its evaluation's failure.
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kCompleted);
  // A failed one can be asked for again.
  ASSERT_TRUE(c_->RequestEvaluation(id, 0, "alice").ok());
  EXPECT_EQ(Evaluations(id)[0]->state, EvaluationState::kPending);
}

TEST_F(EvaluationTest, ATrialWithoutACheckpointIsNotScored) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 1));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.6, /*checkpointed=*/false);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  EXPECT_FALSE(Evaluations(id)[0]);
  EXPECT_EQ(c_->RequestEvaluation(id, 0, "me").code, Status::Code::kFailedPrecondition);
  EXPECT_TRUE(c_->AllStudiesFinished());
}

}  // namespace coordinator_evaluation_test
}  // namespace sift::coordinator

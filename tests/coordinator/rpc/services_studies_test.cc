// The Studies service over a real server: its answers, bad input, status and roles.
#include <gtest/gtest.h>

#include "tests/coordinator/rpc/services_test.h"

namespace sift::coordinator {
namespace services_studies_test {

TEST_F(ServicesRpcTest, StudiesRpcsAnswerWithTheStudyAsItIsNow) {
  Start();
  v1::CreateStudyRequest create;
  create.set_config(kConfig);
  create.set_config_path("svc.yaml");
  v1::CreateStudyResponse created;
  ASSERT_TRUE(studies_->CreateStudy(As("alice").get(), create, &created).ok());
  const v1::Study& s = created.study();
  EXPECT_GT(s.id(), 0);
  EXPECT_EQ(s.name(), "svc");
  EXPECT_EQ(s.state(), v1::STUDY_RUNNING);
  EXPECT_EQ(s.objective_metric(), "val_accuracy");
  EXPECT_TRUE(s.maximize());
  EXPECT_EQ(s.max_trials(), 2);
  EXPECT_EQ(s.trials_total(), 0);
  ASSERT_GE(s.events_size(), 1);
  EXPECT_EQ(s.events(0).action(), "created");
  EXPECT_EQ(s.events(0).user(), "alice");
  EXPECT_EQ(s.events(0).detail(), "svc.yaml");

  v1::GetStudyRequest get;
  get.set_study_id(s.id());
  v1::Study got;
  ASSERT_TRUE(studies_->GetStudy(As("bob").get(), get, &got).ok());
  EXPECT_EQ(got.id(), s.id());
  EXPECT_EQ(got.name(), "svc");
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("bob").get(), v1::ListStudiesRequest(), &list).ok());
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).id(), s.id());

  v1::PauseStudyRequest pause;
  pause.set_study_id(s.id());
  v1::Study paused;
  ASSERT_TRUE(studies_->PauseStudy(As("bob").get(), pause, &paused).ok());
  EXPECT_EQ(paused.state(), v1::STUDY_PAUSED);
  EXPECT_EQ(paused.events(paused.events_size() - 1).user(), "bob");
  v1::ResumeStudyRequest resume;
  resume.set_study_id(s.id());
  v1::Study resumed;
  ASSERT_TRUE(studies_->ResumeStudy(As("bob").get(), resume, &resumed).ok());
  EXPECT_EQ(resumed.state(), v1::STUDY_RUNNING);

  v1::UpdateBudgetRequest budget;
  budget.set_study_id(s.id());
  budget.set_max_trials(5);
  budget.set_max_dollars(2.5);
  v1::Study updated;
  ASSERT_TRUE(studies_->UpdateBudget(As("carol").get(), budget, &updated).ok());
  EXPECT_EQ(updated.max_trials(), 5);
  EXPECT_DOUBLE_EQ(updated.max_dollars(), 2.5);
  EXPECT_DOUBLE_EQ(updated.max_hours(), 0);  // not set in the request: unchanged
  EXPECT_EQ(updated.events(updated.events_size() - 1).user(), "carol");

  v1::CancelStudyRequest cancel;
  cancel.set_study_id(s.id());
  v1::Study cancelled;
  ASSERT_TRUE(studies_->CancelStudy(As("dave").get(), cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::STUDY_CANCELLED);
  // An ended study cannot be paused, resumed or rebudgeted.
  EXPECT_STATUS(studies_->PauseStudy(As("bob").get(), pause, &paused), FAILED_PRECONDITION, "");
  EXPECT_STATUS(studies_->ResumeStudy(As("bob").get(), resume, &resumed), FAILED_PRECONDITION, "");
  EXPECT_STATUS(studies_->UpdateBudget(As("bob").get(), budget, &updated), FAILED_PRECONDITION, "");
}

TEST_F(ServicesRpcTest, AnUnknownStudyIsNotFoundOnEveryStudiesRpc) {
  Start();
  Create();
  const int64_t id = 42;
  v1::Study study;
  v1::GetStudyRequest get;
  get.set_study_id(id);
  EXPECT_STATUS(studies_->GetStudy(As("a").get(), get, &study), NOT_FOUND, "no study 42");
  v1::ListTrialsRequest trials;
  trials.set_study_id(id);
  v1::ListTrialsResponse trials_resp;
  EXPECT_STATUS(studies_->ListTrials(As("a").get(), trials, &trials_resp), NOT_FOUND, "42");
  v1::CancelStudyRequest cancel;
  cancel.set_study_id(id);
  EXPECT_STATUS(studies_->CancelStudy(As("a").get(), cancel, &study), NOT_FOUND, "42");
  v1::PauseStudyRequest pause;
  pause.set_study_id(id);
  EXPECT_STATUS(studies_->PauseStudy(As("a").get(), pause, &study), NOT_FOUND, "42");
  v1::ResumeStudyRequest resume;
  resume.set_study_id(id);
  EXPECT_STATUS(studies_->ResumeStudy(As("a").get(), resume, &study), NOT_FOUND, "42");
  v1::UpdateBudgetRequest budget;
  budget.set_study_id(id);
  budget.set_max_trials(3);
  EXPECT_STATUS(studies_->UpdateBudget(As("a").get(), budget, &study), NOT_FOUND, "42");
  v1::EvaluateTrialRequest evaluate;
  evaluate.set_study_id(id);
  v1::Trial trial;
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), evaluate, &trial), NOT_FOUND, "42");
  // The known study is untouched.
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("a").get(), v1::ListStudiesRequest(), &list).ok());
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).state(), v1::STUDY_RUNNING);
}

TEST_F(ServicesRpcTest, ABadConfigIsRefusedWithWhereItIsWrongAndCreatesNothing) {
  Start();
  v1::CreateStudyRequest req;
  req.set_config_path("bad.yaml");
  v1::CreateStudyResponse resp;
  // YAML that does not parse: the file and the line.
  req.set_config("name: bad\nsearch_space:\n  lr: type: float\nbudget: {max_trials: 2}\n");
  grpc::Status s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("invalid study config"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("bad.yaml:3:"), std::string::npos) << s.error_message();
  // Valid YAML, wrong values: each field by its path.
  req.set_config(
      "name: bad\nsearch_space:\n  lr: {type: float, low: 0, high: 0.1, scale: log}\n"
      "budget: {max_trials: -1}\nscheduler: {type: nope}\n");
  s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  for (const char* field : {"search_space.lr", "budget.max_trials", "scheduler"}) {
    EXPECT_NE(s.error_message().find(field), std::string::npos) << field << "\n"
                                                                << s.error_message();
  }
  // Over the coordinator's size limit: refused before parsing, naming the limit.
  req.set_config(std::string(5000, '#'));
  s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("bad.yaml: 5000 bytes, over the limit of 4096"),
            std::string::npos)
      << s.error_message();
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("a").get(), v1::ListStudiesRequest(), &list).ok());
  EXPECT_EQ(list.studies_size(), 0);
}

TEST_F(ServicesRpcTest, EvaluateTrialQueuesAFinishedTrialsTestScoreOnce) {
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const auto a = Acquire(w).assignment();
  v1::EvaluateTrialRequest req;
  req.set_study_id(study);
  req.set_trial_number(0);
  v1::Trial trial;
  // Still running: nothing to score yet.
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), req, &trial), FAILED_PRECONDITION, "");
  ASSERT_TRUE(Upload(w, a.lease_id(), "trial-0-e2.ckpt", CheckpointBytes("weights")).ok());
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &resp).ok());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &resp, "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(Complete(w, a.lease_id(), "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(studies_->EvaluateTrial(As("a").get(), req, &trial).ok());
  EXPECT_EQ(trial.number(), 0);
  EXPECT_EQ(trial.state(), v1::TRIAL_COMPLETED);
  EXPECT_EQ(trial.test_evaluation(), "pending");
  EXPECT_EQ(trial.checkpoint(), "trial-0-e2.ckpt");
  req.set_trial_number(9);
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), req, &trial), NOT_FOUND, "9");
}

// Regression: `sift status` (the summary rebuilt from these RPCs' answers) printed `by market: -`
// after dollars were spent, "asked for by ;", "RUNNING ();" and the best model's file without
// its folder, where `sift report` (the coordinator's own summary) printed them right.
TEST_F(ServicesRpcTest, StatusPrintsTheSummaryThatReportPrints) {
  use_test_clock_ = true;  // both summaries are made at the same instant
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const auto a = Acquire(w).assignment();
  clock_.Advance(60);
  ASSERT_TRUE(Upload(w, a.lease_id(), "trial-0-e2.ckpt", CheckpointBytes("weights")).ok());
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &resp).ok());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &resp, "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(Complete(w, a.lease_id(), "trial-0-e2.ckpt").ok());
  v1::EvaluateTrialRequest evaluate;
  evaluate.set_study_id(study);
  evaluate.set_trial_number(0);
  v1::Trial evaluated;
  ASSERT_TRUE(studies_->EvaluateTrial(As("erin").get(), evaluate, &evaluated).ok());

  StudyReport direct;
  ASSERT_TRUE(coordinator_->GetStudy(study, &direct.study).ok());
  ASSERT_TRUE(coordinator_->ListTrials(study, &direct.trials).ok());
  StudyReport wire;
  v1::GetStudyRequest get;
  get.set_study_id(study);
  v1::Study got;
  ASSERT_TRUE(studies_->GetStudy(As("a").get(), get, &got).ok());
  wire.study = FromProto(got);
  v1::ListTrialsRequest list;
  list.set_study_id(study);
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), list, &trials).ok());
  for (const auto& t : trials.trials()) wire.trials.push_back(FromProto(t));

  const std::string text = FormatSummary(direct);
  EXPECT_EQ(FormatSummary(wire), text);
  EXPECT_NE(text.find("by market: on-demand $0.0250"), std::string::npos) << text;
  EXPECT_NE(text.find("(asked for by erin; scored once)"), std::string::npos) << text;
  EXPECT_NE(text.find("'svc': RUNNING; "), std::string::npos) << text;
  EXPECT_NE(text.find("best trial's model: " + (dir_ / "checkpoints").string() + "/study-" +
                      std::to_string(study) + "/trial-0-e2.ckpt"),
            std::string::npos)
      << text;
}

TEST_F(ServicesRpcTest, RolesDecideWhoMayCallWhatOverPlaintextToo) {
  ServerSecurity security;
  ASSERT_EQ(security.credentials.Add(common::Role::kUser, "user-0123456789abcdef", "test"), "");
  ASSERT_EQ(security.credentials.Add(common::Role::kViewer, "viewer-0123456789abcdef", "test"), "");
  ASSERT_EQ(security.credentials.Add(common::Role::kWorker, "worker-0123456789abcdef", "test"), "");
  Start(std::move(security));
  v1::CreateStudyRequest create;
  create.set_config(kConfig);
  v1::CreateStudyResponse created;
  EXPECT_STATUS(studies_->CreateStudy(MakeContext("").get(), create, &created), UNAUTHENTICATED,
                "missing 'authorization: Bearer <token>' metadata");
  EXPECT_STATUS(studies_->CreateStudy(MakeContext("user-wrong").get(), create, &created),
                UNAUTHENTICATED, "invalid token");
  EXPECT_STATUS(studies_->CreateStudy(As("v", "viewer-0123456789abcdef").get(), create, &created),
                PERMISSION_DENIED, "a viewer token may not call /sift.v1.Studies/CreateStudy");
  EXPECT_STATUS(studies_->CreateStudy(As("w", "worker-0123456789abcdef").get(), create, &created),
                PERMISSION_DENIED, "a worker token may not call /sift.v1.Studies/CreateStudy");
  ASSERT_TRUE(studies_->CreateStudy(As("u", "user-0123456789abcdef").get(), create, &created).ok());
  v1::ListStudiesResponse list;
  EXPECT_TRUE(
      studies_
          ->ListStudies(As("v", "viewer-0123456789abcdef").get(), v1::ListStudiesRequest(), &list)
          .ok());
  EXPECT_EQ(list.studies_size(), 1);
  v1::RegisterWorkerRequest reg;
  reg.set_price_per_hour(1);
  v1::RegisterWorkerResponse registered;
  EXPECT_STATUS(
      workers_->RegisterWorker(MakeContext("user-0123456789abcdef").get(), reg, &registered),
      PERMISSION_DENIED, "a user token may not call /sift.v1.Workers/RegisterWorker");
  grpc::Status s =
      workers_->RegisterWorker(MakeContext("worker-0123456789abcdef").get(), reg, &registered);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

}  // namespace services_studies_test
}  // namespace sift::coordinator

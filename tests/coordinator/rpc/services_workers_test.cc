// The Workers service over a real server: a trial from lease to completion, reports answered
// once committed, refusals, checkpoints up and back.
#include <gtest/gtest.h>

#include "tests/coordinator/rpc/services_test.h"

namespace sift::coordinator {
namespace services_workers_test {

TEST_F(ServicesRpcTest, WorkerRpcsRunATrialFromLeaseToCompletion) {
  use_test_clock_ = true;  // the idle exit below is timed on it, not on this machine's load
  Start();
  const int64_t study = Create();
  v1::RegisterWorkerRequest reg;
  reg.set_name("w1");
  reg.set_instance_type("local-cpu");
  reg.set_market(v1::MARKET_SPOT);
  reg.set_price_per_hour(1.5);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(workers_->RegisterWorker(MakeContext("").get(), reg, &registered).ok());
  const std::string w = registered.worker_id();
  EXPECT_FALSE(w.empty());
  EXPECT_DOUBLE_EQ(registered.price_per_hour(), 1.5);
  EXPECT_EQ(registered.heartbeat_interval_ms(), 500);
  EXPECT_EQ(registered.lease_timeout_ms(), 30000);

  const v1::AcquireTrialResponse acquired = Acquire(w);
  ASSERT_EQ(acquired.status(), v1::AcquireTrialResponse::ASSIGNED);
  const v1::TrialAssignment& a = acquired.assignment();
  EXPECT_EQ(a.study_id(), study);
  EXPECT_EQ(a.trial_number(), 0);
  EXPECT_FALSE(a.lease_id().empty());
  EXPECT_EQ(a.max_epochs(), 2);
  EXPECT_EQ(a.start_epoch(), 0);
  EXPECT_EQ(a.objective_metric(), "val_accuracy");
  EXPECT_EQ(a.resume_checkpoint(), "");
  EXPECT_EQ(a.checkpoint_dir(), "");  // not shared: checkpoints go through the service
  ASSERT_EQ(a.params().count("lr"), 1u);
  EXPECT_EQ(a.command_size(), 0);
  // The worker trains on the spec's JSON (kept per study, not made per acquisition).
  const data::DataSpec spec = data::DataSpecFromJson(a.data().spec_json());
  EXPECT_EQ(spec.dir, a.data().dir());
  EXPECT_EQ(spec.val_size, a.data().val_size());

  v1::HeartbeatRequest hb;
  hb.set_worker_id(w);
  hb.add_lease_ids(a.lease_id());
  hb.add_lease_ids("not-a-lease");
  v1::HeartbeatResponse hb_resp;
  ASSERT_TRUE(workers_->Heartbeat(MakeContext("").get(), hb, &hb_resp).ok());
  ASSERT_EQ(hb_resp.revoked_lease_ids_size(), 1);
  EXPECT_EQ(hb_resp.revoked_lease_ids(0), "not-a-lease");

  v1::ReportProgressResponse r1, again, r2;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &r1).ok());
  EXPECT_EQ(r1.decision(), v1::DECISION_CONTINUE);
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &again).ok());  // a retry: the same answer
  EXPECT_EQ(again.decision(), r1.decision());
  EXPECT_EQ(again.reason(), r1.reason());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &r2).ok());
  EXPECT_EQ(r2.decision(), v1::DECISION_CONTINUE);
  EXPECT_EQ(r2.reason(), "max epochs reached (2)");
  ASSERT_TRUE(Complete(w, a.lease_id()).ok());
  // The lease ended with the trial.
  EXPECT_STATUS(Complete(w, a.lease_id()), FAILED_PRECONDITION, "is not held");

  v1::ListTrialsRequest lt;
  lt.set_study_id(study);
  lt.set_include_reports(true);
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  ASSERT_EQ(trials.trials_size(), 1);
  const v1::Trial& t = trials.trials(0);
  EXPECT_EQ(t.state(), v1::TRIAL_COMPLETED);
  EXPECT_EQ(t.epochs(), 2);
  EXPECT_TRUE(t.has_objective());
  EXPECT_DOUBLE_EQ(t.objective(), 0.6);
  EXPECT_DOUBLE_EQ(t.final_metrics().at("val_accuracy"), 0.75);
  ASSERT_EQ(t.reports_size(), 2);
  EXPECT_EQ(t.reports(1).epoch(), 2);
  EXPECT_GE(t.cost_dollars(), 0);
  lt.set_include_reports(false);
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  EXPECT_EQ(trials.trials(0).reports_size(), 0);

  // The second (last) trial fails; then there is nothing left, and a worker that asks to leave
  // when idle is told to once it has waited that long.
  const v1::AcquireTrialResponse second = Acquire(w);
  ASSERT_EQ(second.status(), v1::AcquireTrialResponse::ASSIGNED);
  EXPECT_EQ(second.assignment().trial_number(), 1);
  v1::FailTrialRequest fail;
  fail.set_worker_id(w);
  fail.set_lease_id(second.assignment().lease_id());
  fail.set_error("out of memory");
  v1::FailTrialResponse failed;
  ASSERT_TRUE(workers_->FailTrial(MakeContext("").get(), fail, &failed).ok());
  const v1::AcquireTrialResponse none = Acquire(w);
  EXPECT_EQ(none.status(), v1::AcquireTrialResponse::NO_WORK);
  EXPECT_EQ(none.retry_after_ms(), 500);
  EXPECT_EQ(Acquire(w, 0.05).status(), v1::AcquireTrialResponse::NO_WORK);  // idle 0 of 0.05 s
  clock_.Advance(0.1);
  EXPECT_EQ(Acquire(w, 0.05).status(), v1::AcquireTrialResponse::SHUTDOWN);
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  ASSERT_EQ(trials.trials_size(), 2);
  EXPECT_EQ(trials.trials(1).state(), v1::TRIAL_FAILED);
  EXPECT_NE(trials.trials(1).end_reason().find("out of memory"), std::string::npos)
      << trials.trials(1).end_reason();
}

TEST_F(ServicesRpcTest, AReportIsAnsweredOnlyOnceCommittedAndItsRetryMeanwhileTheSame) {
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const std::string lease = Acquire(w).assignment().lease_id();
  // Another connection holds the database's write lock (as another process could): the
  // coordinator's commit waits for it (busy_timeout).
  SQLite::Database other((dir_ / "sift.db").string(), SQLite::OPEN_READWRITE);
  other.exec("BEGIN IMMEDIATE");
  struct Call {
    grpc::ClientContext ctx;
    v1::ReportProgressRequest req;
    v1::ReportProgressResponse resp;
    std::promise<grpc::Status> status;
  };
  auto send = [&](Call& c) {
    c.ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    c.req.set_worker_id(w);
    c.req.set_lease_id(lease);
    c.req.set_seq(1);
    c.req.set_epoch(1);
    (*c.req.mutable_metrics())["val_accuracy"] = 0.5;
    workers_->async()->ReportProgress(&c.ctx, &c.req, &c.resp,
                                      [&c](grpc::Status s) { c.status.set_value(s); });
    return c.status.get_future();
  };
  auto stored = [&] {
    return OpenSqliteStoreReadOnly((dir_ / "sift.db").string())->ListReports(study).size();
  };
  Call first, retry;
  auto first_status = send(first);
  EXPECT_EQ(first_status.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  auto retry_status = send(retry);  // the worker gave up waiting and sent it again
  EXPECT_EQ(retry_status.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(stored(), 0u);
  other.exec("COMMIT");
  const grpc::Status s1 = first_status.get(), s2 = retry_status.get();
  ASSERT_TRUE(s1.ok()) << s1.error_message();
  ASSERT_TRUE(s2.ok()) << s2.error_message();
  EXPECT_EQ(stored(), 1u);
  EXPECT_EQ(first.resp.decision(), v1::DECISION_CONTINUE);
  EXPECT_EQ(retry.resp.decision(), first.resp.decision());
  EXPECT_EQ(retry.resp.reason(), first.resp.reason());
  // The next epoch is decided on it.
  v1::ReportProgressResponse second;
  ASSERT_TRUE(Report(w, lease, 2, 2, 0.6, &second).ok());
  EXPECT_EQ(second.reason(), "max epochs reached (2)");
  EXPECT_EQ(stored(), 2u);
}

TEST_F(ServicesRpcTest, WorkerRpcsRefuseUnknownWorkersAndLeasesNotTheirs) {
  Start();
  Create();
  v1::AcquireTrialRequest acquire;
  acquire.set_worker_id("nobody");
  v1::AcquireTrialResponse acquired;
  EXPECT_STATUS(workers_->AcquireTrial(MakeContext("").get(), acquire, &acquired), NOT_FOUND,
                "unknown worker 'nobody': register first");
  v1::HeartbeatRequest hb;
  hb.set_worker_id("nobody");
  v1::HeartbeatResponse hb_resp;
  EXPECT_STATUS(workers_->Heartbeat(MakeContext("").get(), hb, &hb_resp), NOT_FOUND,
                "unknown worker 'nobody'");

  const std::string w1 = Register("w1"), w2 = Register("w2");
  const auto a = Acquire(w1).assignment();
  v1::ReportProgressResponse resp;
  EXPECT_STATUS(Report(w1, "bogus", 1, 1, 0.5, &resp), FAILED_PRECONDITION,
                "lease 'bogus' is not held (expired, ended or never granted)");
  EXPECT_STATUS(Report(w2, a.lease_id(), 1, 1, 0.5, &resp), FAILED_PRECONDITION,
                "belongs to another worker");
  EXPECT_STATUS(Report("nobody", a.lease_id(), 1, 1, 0.5, &resp), NOT_FOUND, "unknown worker");
  EXPECT_STATUS(Complete(w2, a.lease_id()), FAILED_PRECONDITION, "belongs to another worker");
  v1::PreemptTrialRequest preempt;
  preempt.set_worker_id(w1);
  preempt.set_lease_id(a.lease_id());
  preempt.set_checkpoint("trial-1-e1.ckpt");  // another trial's
  v1::PreemptTrialResponse preempted;
  EXPECT_STATUS(workers_->PreemptTrial(MakeContext("").get(), preempt, &preempted),
                INVALID_ARGUMENT, "trial-1-e1.ckpt");
  // The owner still holds it after all that.
  ASSERT_TRUE(Report(w1, a.lease_id(), 1, 1, 0.5, &resp).ok());
  EXPECT_EQ(resp.decision(), v1::DECISION_CONTINUE);
}

TEST_F(ServicesRpcTest, CheckpointsGoUpAndComeBackAfterAPreemption) {
  Start();
  const int64_t study = Create();
  const std::string w1 = Register("w1"), w2 = Register("w2");
  const auto a = Acquire(w1).assignment();
  const std::string bytes = CheckpointBytes("model weights: " + std::string(100, 'x') + " end");

  // Refused uploads store nothing.
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", "not a checkpoint file"), DATA_LOSS,
                "checkpoint trial-0-e1.ckpt is damaged (truncated");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes, true, 12345u), DATA_LOSS, "CRC");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes, /*last=*/false),
                INVALID_ARGUMENT, "ended without its last chunk");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-7-e1.ckpt", bytes), INVALID_ARGUMENT,
                "not a checkpoint name of trial 0");
  EXPECT_STATUS(Upload(w2, a.lease_id(), "trial-0-e1.ckpt", bytes), FAILED_PRECONDITION,
                "belongs to another worker");
  std::string down;
  EXPECT_STATUS(Download(w1, a.lease_id(), "trial-0-e1.ckpt", &down), NOT_FOUND, "");

  grpc::Status up = Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes);
  ASSERT_TRUE(up.ok()) << up.error_message();
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w1, a.lease_id(), 1, 1, 0.5, &resp, "trial-0-e1.ckpt").ok());
  v1::PreemptTrialRequest preempt;
  preempt.set_worker_id(w1);
  preempt.set_lease_id(a.lease_id());
  preempt.set_checkpoint("trial-0-e1.ckpt");
  preempt.set_reason("spot notice");
  v1::PreemptTrialResponse preempted;
  ASSERT_TRUE(workers_->PreemptTrial(MakeContext("").get(), preempt, &preempted).ok());

  // Another worker gets the trial back where it was, and the checkpoint with it.
  const auto b = Acquire(w2);
  ASSERT_EQ(b.status(), v1::AcquireTrialResponse::ASSIGNED);
  EXPECT_EQ(b.assignment().study_id(), study);
  EXPECT_EQ(b.assignment().trial_number(), 0);
  EXPECT_EQ(b.assignment().start_epoch(), 1);
  EXPECT_EQ(b.assignment().resume_checkpoint(), "trial-0-e1.ckpt");
  EXPECT_EQ(b.assignment().params().at("lr").DebugString(), a.params().at("lr").DebugString());
  ASSERT_TRUE(Download(w2, b.assignment().lease_id(), "trial-0-e1.ckpt", &down).ok());
  EXPECT_EQ(down, bytes);
  // The old lease is gone with its worker's claim on it.
  EXPECT_STATUS(Download(w1, a.lease_id(), "trial-0-e1.ckpt", &down), FAILED_PRECONDITION,
                "is not held");
}

}  // namespace services_workers_test
}  // namespace sift::coordinator

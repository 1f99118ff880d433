// CoordinatorLink (worker/coordinator_link.cc) on its own, against a real coordinator served in
// this process: registration, the trial RPCs, checkpoint transfer, retries through an outage,
// and the heartbeat that keeps a lease and hears that it was revoked.
#include "worker/coordinator_link.h"

#include <gtest/gtest.h>

#include <future>

#include "tests/worker/coordinator_fixture.h"

namespace sift::worker {
namespace coordinator_link_test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using fixture::Eventually;
using CoordinatorLinkTest = fixture::CoordinatorFixture;

TEST_F(CoordinatorLinkTest, LinkRegistersAndRunsTrialsThroughTheCoordinator) {
  StartCoordinator();
  const int64_t study = CreateStudy();
  CoordinatorLink link(options_, &stop_);
  ASSERT_TRUE(link.Register().ok());
  ASSERT_FALSE(link.worker_id().empty());
  std::vector<std::string> revoked;
  EXPECT_TRUE(coordinator_->Heartbeat(link.worker_id(), {}, &revoked).ok());  // it knows us

  const auto first = Acquire(link);
  ASSERT_EQ(first.status(), v1::AcquireTrialResponse::ASSIGNED);
  const v1::TrialAssignment& a = first.assignment();
  EXPECT_EQ(a.study_id(), study);
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(link, a, 1, 0.4, &resp).ok());
  EXPECT_EQ(resp.decision(), v1::DECISION_CONTINUE);
  ASSERT_TRUE(Report(link, a, 2, 0.7, &resp).ok());
  EXPECT_EQ(resp.reason(), "max epochs reached (2)");
  v1::CompleteTrialRequest done;
  (*done.mutable_final_metrics())["val_accuracy"] = 0.7;
  ASSERT_TRUE(link.Complete(a, &done).ok());

  const auto second = Acquire(link);
  ASSERT_EQ(second.status(), v1::AcquireTrialResponse::ASSIGNED);
  link.Fail(second.assignment(), "CUDA out of memory");

  const auto trials = Trials(study);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].record.state, search::TrialState::kCompleted);
  EXPECT_EQ(trials[0].reports.size(), 2u);
  EXPECT_DOUBLE_EQ(trials[0].record.final_metrics.at("val_accuracy"), 0.7);
  EXPECT_EQ(trials[1].record.state, search::TrialState::kFailed);
  EXPECT_NE(trials[1].record.end_reason.find("CUDA out of memory"), std::string::npos)
      << trials[1].record.end_reason;
  // Both were charged at the price the worker registered with.
  EXPECT_GT(trials[0].dollars, 0);
}

TEST_F(CoordinatorLinkTest, CheckpointsGoUpAndComeBackAcrossAPreemption) {
  StartCoordinator();
  CreateStudy();
  CoordinatorLink link(options_, &stop_);
  ASSERT_TRUE(link.Register().ok());
  const v1::TrialAssignment a = Acquire(link).assignment();
  ASSERT_EQ(a.checkpoint_dir(), "");  // not shared: through the coordinator
  const std::string local = WriteCheckpoint(link, a, "trial-0-e1.ckpt", "weights after epoch 1");
  const std::string bytes = fixture::ReadAll(local);
  ASSERT_EQ(link.StoreCheckpoint(a, "trial-0-e1.ckpt"), "");
  EXPECT_FALSE(fs::exists(local));  // the coordinator holds it now
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(link, a, 1, 0.4, &resp, "trial-0-e1.ckpt").ok());
  ASSERT_TRUE(link.Preempt(a, "trial-0-e1.ckpt", "spot notice").ok());

  const auto again = Acquire(link);
  ASSERT_EQ(again.status(), v1::AcquireTrialResponse::ASSIGNED);
  const v1::TrialAssignment& b = again.assignment();
  EXPECT_EQ(b.trial_number(), 0);
  EXPECT_EQ(b.start_epoch(), 1);
  ASSERT_EQ(b.resume_checkpoint(), "trial-0-e1.ckpt");
  const std::string fetched = (dir_ / "fetched.ckpt").string();
  bool missing = true;
  ASSERT_EQ(link.FetchCheckpoint(b, b.resume_checkpoint(), fetched, &missing), "");
  EXPECT_FALSE(missing);
  EXPECT_EQ(fixture::ReadAll(fetched), bytes);
  EXPECT_EQ(common::CheckpointFileProblem(fetched), "");
  // One the coordinator does not have is missing, not an error to retry.
  const std::string none = link.FetchCheckpoint(b, "trial-0-e2.ckpt", fetched, &missing);
  EXPECT_TRUE(missing);
  EXPECT_NE(none.find("cannot fetch checkpoint trial-0-e2.ckpt"), std::string::npos) << none;
  // A damaged file is refused by the coordinator and reported, not stored.
  const std::string bad = link.LocalCheckpoint(b, "trial-0-e2.ckpt");
  std::ofstream(bad) << "half a checkpoint";
  const std::string refused = link.StoreCheckpoint(b, "trial-0-e2.ckpt");
  EXPECT_NE(refused.find("checkpoint upload failed"), std::string::npos) << refused;
  EXPECT_NE(link.FetchCheckpoint(b, "trial-0-e2.ckpt", fetched, &missing), "");
  EXPECT_TRUE(missing);
}

TEST_F(CoordinatorLinkTest, ASharedCheckpointDirectoryIsUsedInPlace) {
  CoordinatorLink link(options_, &stop_);
  v1::TrialAssignment a;
  a.set_checkpoint_dir((dir_ / "shared").string());
  const std::string path = link.LocalCheckpoint(a, "trial-0-e1.ckpt");
  EXPECT_EQ(path, (dir_ / "shared" / "trial-0-e1.ckpt").string());
  EXPECT_TRUE(fs::is_directory(dir_ / "shared"));
  bool missing = false;
  EXPECT_EQ(link.FetchCheckpoint(a, "trial-0-e1.ckpt", path, &missing), "no checkpoint " + path);
  EXPECT_TRUE(missing);
  std::ofstream(path) << "x";
  EXPECT_EQ(link.StoreCheckpoint(a, "trial-0-e1.ckpt"), "");  // nothing to upload
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(link.FetchCheckpoint(a, "trial-0-e1.ckpt", path, &missing), "");
  EXPECT_FALSE(missing);
}

TEST_F(CoordinatorLinkTest, CallsRetryWhileTheCoordinatorIsDownAndGetThroughOnceItIsUp) {
  // Nobody listens yet: registration keeps trying.
  CoordinatorLink link(options_, &stop_);
  auto registered = std::async(std::launch::async, [&] { return link.Register(); });
  EXPECT_EQ(registered.wait_for(std::chrono::milliseconds(1500)), std::future_status::timeout);
  StartCoordinator();
  ASSERT_EQ(registered.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  grpc::Status s = registered.get();
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<std::string> revoked;
  EXPECT_TRUE(coordinator_->Heartbeat(link.worker_id(), {}, &revoked).ok());

  // Down for longer than retry_seconds: the call gives up UNAVAILABLE after about that long.
  StopCoordinator();
  WorkerOptions brief = options_;
  brief.retry_seconds = 0.5;
  CoordinatorLink impatient(brief, &stop_);
  const auto start = Clock::now();
  s = impatient.Register();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_GE(Clock::now() - start, milliseconds(500));
  // A stop request ends the retries at once.
  auto stopped = std::async(std::launch::async, [&] { return link.Register(); });
  std::this_thread::sleep_for(milliseconds(300));
  stop_ = true;
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(8)), std::future_status::ready);
  EXPECT_EQ(stopped.get().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(CoordinatorLinkTest, TheHeartbeatKeepsTheLeaseAndNoticesWhenItIsRevoked) {
  StartCoordinator("sift.db", /*lease_timeout_s=*/1.5);
  const int64_t study = CreateStudy();
  CoordinatorLink link(options_, &stop_);
  ASSERT_TRUE(link.Register().ok());
  link.StartHeartbeat();
  const v1::TrialAssignment a = Acquire(link).assignment();
  link.SetLease(a.lease_id());
  EXPECT_EQ(link.lease(), a.lease_id());
  // Heartbeats every 0.1 s keep a 1.5 s lease past its timeout.
  std::this_thread::sleep_for(milliseconds(2500));
  EXPECT_FALSE(link.revoked());
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(link, a, 1, 0.4, &resp).ok());

  // Without heartbeats for it, the coordinator expires the lease and requeues the trial; the
  // heartbeat that names it again hears that it was revoked.
  link.SetLease("");
  ASSERT_TRUE(Eventually([&] {
    const auto trials = Trials(study);
    return trials[0].record.state == search::TrialState::kPending;
  }));
  link.SetLease(a.lease_id());
  ASSERT_TRUE(Eventually([&] { return link.revoked(); }));
  grpc::Status s = Report(link, a, 2, 0.5, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  // A new lease starts unrevoked.
  link.SetLease("another");
  EXPECT_FALSE(link.revoked());
}

// Registering again (WorkerClient does on NOT_FOUND) while the heartbeat thread runs: the
// heartbeat sends the new worker id from then on. Register wrote the id without the lock the
// heartbeat reads it under (a data race; ThreadSanitizer reports it on this test).
TEST_F(CoordinatorLinkTest, RegisteringAgainWhileTheHeartbeatRunsSwitchesItsWorkerId) {
  StartCoordinator();
  CreateStudy();
  CoordinatorLink link(options_, &stop_);
  ASSERT_TRUE(link.Register().ok());
  const std::string first = link.worker_id();
  link.StartHeartbeat();
  const v1::TrialAssignment a = Acquire(link).assignment();
  link.SetLease(a.lease_id());
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(link.revoked());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(link.Register().ok());
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(link.worker_id(), first);
  // The lease is the first registration's: heard from the new id, it is not that worker's.
  ASSERT_TRUE(Eventually([&] { return link.revoked(); }));
}

}  // namespace coordinator_link_test
}  // namespace sift::worker

// Lease endings on their own, over a real SQLite store: what an expiry, a failure, a refusal and a
// completion leave in the Store, the ledger and the runner, and which study-level steps they ask
// of the Coordinator (recorded by the hooks here).
#include "coordinator/core/lease_endings.h"

#include <gtest/gtest.h>

#include "tests/coordinator/state_fixture.h"

namespace sift::coordinator {
namespace lease_endings_test {

using search::TrialState;

// What the lease endings asked of the Coordinator.
struct RecordedHooks : LeaseEndings::Hooks {
  std::optional<Status> EndEvaluationLease(ServedStudy*, const std::string&, const std::string&,
                                           EvaluationState, const std::map<std::string, double>&,
                                           const std::string&, bool) override {
    return std::nullopt;  // no evaluation leases here
  }
  void MaybeFinishStudy(ServedStudy&, double) override { ++finish_checks; }
  void MaybeFailUnrunnable(ServedStudy&, const std::string& why, double) override {
    unrunnable.push_back(why);
  }
  int finish_checks = 0;
  std::vector<std::string> unrunnable;
};

class LeaseEndingsTest : public testing::StateFixture {
 protected:
  LeaseEndingsTest() : StateFixture("sift-lease-endings") {
    CoordinatorOptions o;
    o.lease_timeout_s = 10;
    Open(o);
    endings_ = std::make_unique<LeaseEndings>(*state_, hooks_);
    study_ = ServeStudy(5);
    AddWorker("w1");
  }
  // A registered worker billed at a dollar a second.
  void AddWorker(const std::string& id) {
    WorkerRecord w;
    w.id = id;
    w.name = id;
    w.market = "on-demand";
    w.price_per_hour = 3600;
    state_->store_->UpsertWorker(w);
    std::lock_guard<std::mutex> table(state_->table_mu_);
    state_->workers_.Add(w, Now());
  }
  // Trial `number` running under a new lease of `worker`, in memory and the Store.
  std::string Lease(int64_t number, const std::string& worker = "w1") {
    const std::string lease_id = "L-" + std::to_string(number);
    TrialRecord t;
    t.study_id = study_->id();
    t.number = number;
    t.params = {{"lr", 0.01}};
    t.state = TrialState::kRunning;
    t.created_at = Now();
    SegmentRecord seg;
    seg.lease_id = lease_id;
    seg.worker_id = worker;
    seg.study_id = study_->id();
    seg.number = number;
    seg.start = Now();
    seg.price_per_hour = 3600;
    seg.market = "on-demand";
    state_->store_->InsertTrial(t);
    state_->store_->OpenSegment(seg);
    std::lock_guard<std::mutex> lock(study_->mu);
    study_->runner->ApplyNewTrial(number, t.params);
    study_->runner->ApplyState(number, TrialState::kRunning);
    std::lock_guard<std::mutex> table(state_->table_mu_);
    state_->leases_.Grant(TrialLease{lease_id, worker, study_->id(), number, Now()});
    state_->ledger_.Open(seg);
    return lease_id;
  }
  SegmentRecord Segment(const std::string& lease_id) {
    for (const auto& s : state_->store_->ListSegments(study_->id())) {
      if (s.lease_id == lease_id) return s;
    }
    ADD_FAILURE() << "no segment " << lease_id;
    return {};
  }
  TrialState Stored(int64_t number) {
    return state_->store_->ListTrials(study_->id())[number].state;
  }
  TrialState InMemory(int64_t number) {
    std::lock_guard<std::mutex> lock(study_->mu);
    return study_->runner->view().trials[number].state;
  }
  size_t Leases() {
    std::lock_guard<std::mutex> table(state_->table_mu_);
    return state_->leases_.OfStudy(study_->id()).size();
  }

  RecordedHooks hooks_;
  std::unique_ptr<LeaseEndings> endings_;
  std::shared_ptr<ServedStudy> study_;
};

TEST_F(LeaseEndingsTest, ASilentLeaseIsRequeuedAndBilledToItsLastHeartbeat) {
  const double start = Now();
  const std::string kept = Lease(0);
  const std::string lost = Lease(1);
  clock_.Advance(4);
  std::vector<std::string> revoked;
  ASSERT_TRUE(endings_->Heartbeat("w1", {lost}, &revoked).ok());
  clock_.Advance(8);  // 12 s after the start: `kept` is silent, `lost` heard from 8 s ago
  endings_->ExpireLeases(Now());
  EXPECT_EQ(Leases(), 1u);
  EXPECT_FALSE(Segment(lost).end.has_value());
  const SegmentRecord expired = Segment(kept);
  ASSERT_TRUE(expired.end.has_value());
  EXPECT_EQ(*expired.end, start);  // its worker was never heard from after the lease began
  EXPECT_EQ(expired.end_reason, "expired");
  EXPECT_EQ(Stored(0), TrialState::kPending);
  EXPECT_EQ(InMemory(0), TrialState::kPending);
  clock_.Advance(20);  // now `lost` is silent too: billed to its heartbeat, 4 s at $1/s
  endings_->ExpireLeases(Now());
  EXPECT_EQ(Leases(), 0u);
  EXPECT_EQ(*Segment(lost).end, start + 4);
  EXPECT_DOUBLE_EQ(state_->StudyDollars(study_->id(), Now()), 4.0);
  std::lock_guard<std::mutex> lock(study_->mu);
  EXPECT_DOUBLE_EQ(study_->runner->view().trials[1].cost_dollars, 4.0);
}

TEST_F(LeaseEndingsTest, HeartbeatRevokesWhatTheWorkerNoLongerHolds) {
  const std::string held = Lease(0);
  std::vector<std::string> revoked;
  ASSERT_TRUE(endings_->Heartbeat("w1", {held, "L-gone"}, &revoked).ok());
  EXPECT_EQ(revoked, std::vector<std::string>{"L-gone"});
  revoked.clear();
  const Status unknown = endings_->Heartbeat("w-nobody", {held}, &revoked);
  EXPECT_EQ(unknown.code, Status::Code::kNotFound);
  EXPECT_NE(unknown.message.find("w-nobody"), std::string::npos) << unknown.message;
}

TEST_F(LeaseEndingsTest, AFailureEndsTheTrialAndARefusalRequeuesIt) {
  const std::string failed = Lease(0);
  const std::string refused = Lease(1);
  clock_.Advance(3);
  ASSERT_TRUE(endings_->FailTrial("w1", failed, "out of memory", false).ok());
  EXPECT_EQ(Stored(0), TrialState::kFailed);
  EXPECT_EQ(Segment(failed).end_reason, "failed");
  EXPECT_EQ(hooks_.finish_checks, 1);
  EXPECT_TRUE(hooks_.unrunnable.empty());

  ASSERT_TRUE(endings_->FailTrial("w1", refused, "no data here", true).ok());
  EXPECT_EQ(Stored(1), TrialState::kPending);  // not the trial's fault
  EXPECT_EQ(InMemory(1), TrialState::kPending);
  EXPECT_EQ(Segment(refused).end_reason, "refused");
  EXPECT_EQ(hooks_.unrunnable, std::vector<std::string>{"no data here"});
  {
    std::lock_guard<std::mutex> table(state_->table_mu_);
    EXPECT_EQ(state_->workers_.Find("w1")->cannot_run, std::set<int64_t>{study_->id()});
  }
  // Ended once: a second failure of the same lease is refused.
  EXPECT_EQ(endings_->FailTrial("w1", failed, "again", false).code,
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(Leases(), 0u);
}

TEST_F(LeaseEndingsTest, ACompletionCommitsThenEndsTheLeaseOnce) {
  const std::string lease = Lease(0);
  clock_.Advance(5);
  ASSERT_TRUE(endings_->CompleteTrial("w1", lease, {{"test_accuracy", 0.9}}, "").ok());
  EXPECT_EQ(Stored(0), TrialState::kCompleted);
  EXPECT_EQ(InMemory(0), TrialState::kCompleted);
  EXPECT_EQ(Segment(lease).end_reason, "completed");
  EXPECT_EQ(state_->store_->ListTrials(study_->id())[0].final_metrics.at("test_accuracy"), 0.9);
  EXPECT_DOUBLE_EQ(state_->StudyDollars(study_->id(), Now()), 5.0);
  EXPECT_EQ(hooks_.finish_checks, 1);
  const Status again = endings_->CompleteTrial("w1", lease, {}, "");
  EXPECT_EQ(again.code, Status::Code::kFailedPrecondition);
  EXPECT_NE(again.message.find(lease), std::string::npos) << again.message;
}

TEST_F(LeaseEndingsTest, AHandBackRequeuesFromItsCheckpoint) {
  const std::string lease = Lease(0);
  clock_.Advance(2);
  std::lock_guard<std::mutex> lock(study_->mu);
  ASSERT_TRUE(
      endings_->EndLeaseAndRequeue(*study_, lease, Now(), "study paused", "trial-0-e1.ckpt", 0.5)
          .ok());
  EXPECT_EQ(study_->runner->view().trials[0].state, TrialState::kPending);
  EXPECT_EQ(study_->resume.at(0), "trial-0-e1.ckpt");
  const SegmentRecord seg = Segment(lease);
  EXPECT_EQ(seg.end_reason, "study paused");
  EXPECT_EQ(seg.wasted_seconds, 0.5);
  EXPECT_EQ(Stored(0), TrialState::kPending);
}

}  // namespace lease_endings_test
}  // namespace sift::coordinator

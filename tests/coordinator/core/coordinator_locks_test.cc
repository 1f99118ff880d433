// The Coordinator's locks: one per study, so that a study busy deciding or committing holds up no
// other study (coordinator.h, "Locks"). Behaviour only: the tests hold one study's lock and see
// the other study's calls finish, and run several studies from many threads to their end.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "coordinator/core/coordinator.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace sift::coordinator {

// What a test may hold: one study's lock, as a long decision or commit of that study holds it.
struct CoordinatorTestPeer {
  static std::unique_lock<std::mutex> HoldStudy(Coordinator& c, int64_t study_id) {
    return c.LockStudyForTest(study_id);
  }
  // Holds the group commit's writer inside a write until `release` is ready: nothing commits.
  static void BlockWriter(Coordinator& c, std::shared_future<void> release) {
    c.commit_->Submit([release] { release.wait(); });
  }
  static double LastSeen(Coordinator& c, const std::string& worker_id) {
    std::lock_guard<std::mutex> table(c.table_mu_);
    return c.workers_.Find(worker_id)->last_seen;
  }
  static size_t Leases(Coordinator& c, int64_t study_id) {
    std::lock_guard<std::mutex> table(c.table_mu_);
    return c.leases_.OfStudy(study_id).size();
  }
  static bool Completing(Coordinator& c, const std::string& lease_id) {
    std::lock_guard<std::mutex> table(c.table_mu_);
    const TrialLease* lease = c.leases_.Find(lease_id);
    return lease && lease->completing.valid();
  }
  // Whether nobody holds the study's lock right now.
  static bool StudyFree(Coordinator& c, int64_t study_id) {
    auto study = c.studies_.Find(study_id);
    std::unique_lock<std::mutex> lock(study->mu, std::try_to_lock);
    return lock.owns_lock();
  }
};

namespace coordinator_locks_test {

using search::TrialState;
using namespace std::chrono_literals;

std::string Config(int trials, int epochs) {
  return "name: t\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "trainer: {model: mlp}\n"
         "scheduler: {type: fifo}\n"
         "budget: {max_trials: " +
         std::to_string(trials) + ", max_epochs: " + std::to_string(epochs) +
         "}\n"
         "seed: 5\n";
}

class CoordinatorLocksTest : public testing::CoordinatorFixture {
 protected:
  CoordinatorLocksTest() : CoordinatorFixture("sift-locks") {}
  void SetUp() override {
    CoordinatorFixture::SetUp();
    CoordinatorOptions o;
    o.lease_timeout_s = 10;
    o.checkpoint_dir = db_.string() + ".checkpoints";
    Reopen(o);
  }
  // AcquireTrial on a thread of its own: its status (NOT_FOUND when no work) and assignment.
  std::future<std::pair<Status, Assignment>> AcquireAsync(const std::string& w) {
    return std::async(std::launch::async, [this, w] {
      AcquireResult r = AcquireResult::kNoWork;
      Assignment a;
      Status s = c_->AcquireTrial(w, &r, &a);
      if (s.ok() && r != AcquireResult::kAssigned) s = Status::Error(Status::Code::kNotFound, "");
      return std::make_pair(s, a);
    });
  }
};

// Before per-study locks, every call waited for the one coordinator-wide mutex: with it held,
// both calls below blocked until the end of the hold.
TEST_F(CoordinatorLocksTest, AStudyHoldingItsLockHoldsUpNoOtherStudy) {
  const int64_t a = Study(Config(2, 3));
  const int64_t b = Study(Config(2, 3));
  const std::string wa = Worker(), wb = Worker(), wc = Worker();
  const Assignment ta = Acquire(wa);
  ASSERT_EQ(ta.study_id, a);
  (void)Acquire(wa);  // A's second and last trial: the next one is B's
  const Assignment tb = Acquire(wb);
  ASSERT_EQ(tb.study_id, b);

  std::unique_lock<std::mutex> hold = CoordinatorTestPeer::HoldStudy(*c_, a);
  auto report = std::async(std::launch::async, [&] {
    search::Decision d;
    return c_->ReportProgress(wb, tb.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d);
  });
  const bool reported = report.wait_for(20s) == std::future_status::ready;
  // A worker looking for work skips the busy study and gets B's other trial.
  auto acquire = std::async(std::launch::async, [&] {
    AcquireResult r = AcquireResult::kNoWork;
    Assignment out;
    Status s = c_->AcquireTrial(wc, &r, &out);
    return std::make_pair(s.ok() && r == AcquireResult::kAssigned, out.study_id);
  });
  const bool acquired = acquire.wait_for(20s) == std::future_status::ready;
  auto heartbeat = std::async(std::launch::async, [&] {
    std::vector<std::string> revoked;
    return c_->Heartbeat(wa, {ta.lease_id}, &revoked).ok() && revoked.empty();
  });
  const bool heard = heartbeat.wait_for(20s) == std::future_status::ready;
  hold.unlock();  // before the futures are joined, whatever happened
  EXPECT_TRUE(reported) << "study B's report waited for study A's lock";
  EXPECT_TRUE(acquired) << "an acquire waited for study A's lock while B had work";
  EXPECT_TRUE(heard) << "a heartbeat waited for study A's lock";
  EXPECT_TRUE(report.get().ok());
  const auto [assigned, study] = acquire.get();
  EXPECT_TRUE(assigned);
  EXPECT_EQ(study, b);
  EXPECT_TRUE(heartbeat.get());
}

// Polls `done` for up to 20 s.
bool Eventually(const std::function<bool()>& done) {
  for (auto until = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(1ms)) {
    if (done()) return true;
  }
  return false;
}

// An acquisition's write commits with its study's lock let go, so the study's other calls go on
// (and share the transaction). Before, AcquireTrial held the study's lock until its commit, and
// no second lease could be granted while the first one's write was waiting.
TEST_F(CoordinatorLocksTest, AnAcquisitionWaitsForItsCommitWithoutHoldingItsStudy) {
  const int64_t id = Study(Config(3, 2));
  const std::string w1 = Worker(), w2 = Worker();
  std::promise<void> release;
  CoordinatorTestPeer::BlockWriter(*c_, release.get_future().share());
  auto first = AcquireAsync(w1);
  auto second = AcquireAsync(w2);
  // Both leases granted in memory, the study free, neither answered: no commit has happened.
  const bool granted = Eventually([&] {
    return CoordinatorTestPeer::Leases(*c_, id) == 2 && CoordinatorTestPeer::StudyFree(*c_, id);
  });
  const bool answered_early = first.wait_for(0s) == std::future_status::ready ||
                              second.wait_for(0s) == std::future_status::ready;
  release.set_value();
  EXPECT_TRUE(granted) << "the second lease waited for the first one's commit";
  EXPECT_FALSE(answered_early) << "a lease was handed out before its write committed";
  const auto [s1, a1] = first.get();
  const auto [s2, a2] = second.get();
  EXPECT_TRUE(s1.ok() && s2.ok()) << s1.message << s2.message;
  EXPECT_NE(a1.number, a2.number);
  EXPECT_EQ(OpenSqliteStoreReadOnly(db_.string())->ListTrials(id).size(), 2u);
}

// A completion commits with its study's lock let go too; until it did, its lease stays held: a
// retry gets the first one's answer, and nothing else (a failure report here) ends it.
TEST_F(CoordinatorLocksTest, ACompletionWaitsForItsCommitWithoutHoldingItsStudy) {
  const int64_t id = Study(Config(2, 1));
  const std::string w1 = Worker(), w2 = Worker();
  const Assignment t0 = Acquire(w1);
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w1, t0.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());
  std::promise<void> release;
  CoordinatorTestPeer::BlockWriter(*c_, release.get_future().share());
  auto complete = [&] {
    return std::async(std::launch::async, [&] {
      return c_->CompleteTrial(w1, t0.lease_id, {{"val_accuracy", 0.5}});
    });
  };
  auto first = complete();
  const bool in_flight = Eventually([&] {
    return CoordinatorTestPeer::Completing(*c_, t0.lease_id) &&
           CoordinatorTestPeer::StudyFree(*c_, id);
  });
  const Status failed = c_->FailTrial(w1, t0.lease_id, "late failure", false);
  // The retry has come once it touched its worker (under the study's lock, which the first
  // call needs again to end the lease): it is answered after the commit, like the first.
  clock_.Advance(1);
  auto retry = complete();
  const double retried_at = *clock_.now;
  const bool retried =
      Eventually([&] { return CoordinatorTestPeer::LastSeen(*c_, w1) == retried_at; });
  // The study's next trial is leased meanwhile (its answer waits for the commit too).
  auto acquire = AcquireAsync(w2);
  const bool leased = Eventually([&] { return CoordinatorTestPeer::Leases(*c_, id) == 2; });
  const bool answered_early = first.wait_for(0s) == std::future_status::ready ||
                              retry.wait_for(0s) == std::future_status::ready;
  release.set_value();
  EXPECT_TRUE(in_flight) << "the completion held its study's lock while its write waited";
  EXPECT_TRUE(retried);
  EXPECT_TRUE(leased) << "the next trial waited for the completion's commit";
  EXPECT_FALSE(answered_early) << "a completion was answered before its write committed";
  EXPECT_EQ(failed.code, Status::Code::kFailedPrecondition) << failed.message;
  EXPECT_TRUE(first.get().ok());
  const Status again = retry.get();
  EXPECT_TRUE(again.ok()) << again.message;
  EXPECT_TRUE(acquire.get().first.ok());
  const auto trials = OpenSqliteStoreReadOnly(db_.string())->ListTrials(id);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].state, TrialState::kCompleted);
  EXPECT_EQ(CoordinatorTestPeer::Leases(*c_, id), 1u);  // the second trial's
}

// A new trial whose write fails takes its lease back, and a trial numbered after it (decided
// while it was committing) is not stored either: the numbers would have a gap, and a study with
// one cannot be restored. The next acquisition gets the failed number again.
TEST_F(CoordinatorLocksTest, AFailedNewTrialIsTakenBackAndNoTrialAfterItIsStored) {
  const int64_t id = Study(Config(3, 1));
  const std::string w1 = Worker(), w2 = Worker();
  // The database refuses trial 0's row (as a full disk or a constraint would), not trial 1's.
  SQLite::Database other(db_.string(), SQLite::OPEN_READWRITE);
  other.exec(
      "CREATE TRIGGER refuse_trial_0 BEFORE INSERT ON trials WHEN NEW.number = 0 "
      "BEGIN SELECT RAISE(ABORT, 'trial 0 refused by the test'); END");
  std::promise<void> release;
  CoordinatorTestPeer::BlockWriter(*c_, release.get_future().share());
  auto first = AcquireAsync(w1);
  ASSERT_TRUE(Eventually([&] { return CoordinatorTestPeer::Leases(*c_, id) == 1; }));
  auto second = AcquireAsync(w2);
  const bool both = Eventually([&] { return CoordinatorTestPeer::Leases(*c_, id) == 2; });
  release.set_value();
  const Status s1 = first.get().first, s2 = second.get().first;
  EXPECT_TRUE(both) << "the second trial waited for the first one's commit";
  EXPECT_EQ(s1.code, Status::Code::kUnavailable) << s1.message;
  EXPECT_NE(s1.message.find("refused by the test"), std::string::npos) << s1.message;
  EXPECT_EQ(s2.code, Status::Code::kUnavailable) << s2.message;
  EXPECT_EQ(CoordinatorTestPeer::Leases(*c_, id), 0u);
  EXPECT_TRUE(OpenSqliteStoreReadOnly(db_.string())->ListTrials(id).empty());
  other.exec("DROP TRIGGER refuse_trial_0");
  EXPECT_EQ(Acquire(w1).number, 0);
  EXPECT_EQ(Acquire(w2).number, 1);
  // A restart reads the study back (a gap in its numbers would make that throw).
  CoordinatorOptions o;
  o.lease_timeout_s = 10;
  Reopen(o);
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[1].record.number, 1);
}

// Several studies, each driven by its own workers on their own threads, beside threads that
// tick, list and heartbeat: every study ends with every trial completed and every acknowledged
// report in the Store (the test TSan runs to find races between the locks).
TEST_F(CoordinatorLocksTest, StudiesRunConcurrentlyToTheirEndWithEveryReportStored) {
  constexpr int kStudies = 4, kWorkersPerStudy = 3, kTrials = 6, kEpochs = 4;
  std::vector<int64_t> ids;
  for (int i = 0; i < kStudies; ++i) ids.push_back(Study(Config(kTrials, kEpochs)));
  std::atomic<int> acknowledged{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kStudies * kWorkersPerStudy; ++i) {
    const std::string w = Worker();
    threads.emplace_back([&, w] {
      for (;;) {
        AcquireResult r = AcquireResult::kNoWork;
        Assignment a;
        ASSERT_TRUE(c_->AcquireTrial(w, &r, &a).ok());
        if (r != AcquireResult::kAssigned) return;
        for (int64_t e = a.start_epoch + 1; e <= kEpochs; ++e) {
          search::Decision d;
          Status s = c_->ReportProgress(w, a.lease_id, e, e, {{"val_accuracy", 0.1 * e}}, "", &d);
          ASSERT_TRUE(s.ok()) << s.message;
          ++acknowledged;
        }
        ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
      }
    });
  }
  std::thread watcher([&] {
    while (!done) {
      c_->Tick();
      (void)c_->ListStudies();
      std::vector<TrialSummary> trials;
      (void)c_->ListTrials(ids.front(), &trials);
      (void)c_->AllStudiesFinished();
      std::this_thread::yield();
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  watcher.join();
  c_->Tick();
  EXPECT_EQ(acknowledged, kStudies * kTrials * kEpochs);
  EXPECT_TRUE(c_->AllStudiesFinished());
  auto store = OpenSqliteStoreReadOnly(db_.string());
  for (int64_t id : ids) {
    EXPECT_EQ(store->ListReports(id).size(), size_t{kTrials * kEpochs}) << "study " << id;
    for (const auto& t : store->ListTrials(id)) EXPECT_EQ(t.state, TrialState::kCompleted);
    StudySummary s;
    ASSERT_TRUE(c_->GetStudy(id, &s).ok());
    EXPECT_EQ(s.record.state, StudyState::kCompleted) << "study " << id;
  }
}

}  // namespace coordinator_locks_test
}  // namespace sift::coordinator

// The Coordinator's locks: one per study, so that a study busy deciding or committing holds up no
// other study (coordinator.h, "Locks"). Behaviour only: the tests hold one study's lock and see
// the other study's calls finish, and run several studies from many threads to their end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "coordinator/coordinator.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace sift::coordinator {

// What a test may hold: one study's lock, as a long decision or commit of that study holds it.
struct CoordinatorTestPeer {
  static std::unique_lock<std::mutex> HoldStudy(Coordinator& c, int64_t study_id) {
    return c.LockStudyForTest(study_id);
  }
};

namespace {

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

}  // namespace
}  // namespace sift::coordinator

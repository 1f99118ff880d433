// Two coordinators on one database: the study lease decides which one serves a study, and the
// other takes it over, with its running trial's lease and worker, once the first stops renewing.
// Lease expiry is the database's clock, so these tests wait for it in real time (a lease of a
// few seconds, polled); the coordinators' own clocks are test clocks. Each runs on SQLite and
// on a real PostgreSQL server (tests/pg_server.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "coordinator/core/coordinator.h"
#include "tests/coordinator/test_clock.h"
#include "tests/pg_server.h"

namespace sift::coordinator {
namespace study_lease_test {

constexpr const char* kConfig = R"(name: leased
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
trainer: {model: mlp}
budget: {max_trials: 2, max_epochs: 3}
seed: 5
)";

constexpr double kLeaseS = 3;

class StudyLeaseTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    checkpoints_ = (std::filesystem::temp_directory_path() /
                    ("sift-lease-" + std::to_string(getpid()) + ".checkpoints"))
                       .string();
    if (GetParam() == "Postgres") {
      std::string why;
      db_ = sift::testing::NewTestDatabase(&why);
      if (db_.empty()) GTEST_SKIP() << why;
    } else {
      db_ = (std::filesystem::temp_directory_path() /
             ("sift-lease-" + std::to_string(getpid()) + ".db"))
                .string();
    }
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    if (GetParam() != "Postgres") {
      for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + s);
    }
    std::filesystem::remove_all(checkpoints_);
  }
  std::unique_ptr<Coordinator> Open(const std::string& owner) {
    CoordinatorOptions o;
    o.clock = clock_.fn();
    o.lease_timeout_s = 10;
    o.study_lease_s = kLeaseS;
    o.owner = owner;
    o.checkpoint_dir = checkpoints_;
    return std::make_unique<Coordinator>(OpenStore(db_), o);
  }
  static bool Serves(Coordinator& c, int64_t id) {
    StudySummary s;
    return c.GetStudy(id, &s).ok();
  }
  // Ticks `c` (its renewals due each time) until it serves study `id`: once the lease it waits
  // for has expired by the database's clock. False after 30 s.
  bool TakesOver(Coordinator& c, int64_t id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      clock_.Advance(kLeaseS);
      c.Tick();
      if (Serves(c, id)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  WorkerRecord Register(Coordinator& c, const std::string& name) {
    WorkerRecord in, out;
    in.name = name;
    in.instance_type = "x";
    in.market = "spot";
    in.price_per_hour = 3.6;
    EXPECT_TRUE(c.RegisterWorker(in, &out).ok());
    return out;
  }

  testing::TestClock clock_;
  std::string db_, checkpoints_;
};

TEST_P(StudyLeaseTest, OnlyTheHolderServesAndAnotherTakesOverWhenItStopsRenewing) {
  auto a = Open("a");
  int64_t id = 0;
  std::vector<std::string> errors;
  ASSERT_TRUE(a->CreateStudy(kConfig, "test.yaml", &id, &errors).ok());
  auto b = Open("b");  // started after the study: it finds the study leased to a
  EXPECT_TRUE(Serves(*a, id));
  EXPECT_FALSE(Serves(*b, id));

  const WorkerRecord worker = Register(*a, "w");
  AcquireResult r;
  Assignment lease;
  ASSERT_TRUE(a->AcquireTrial(worker.id, &r, &lease).ok());
  ASSERT_EQ(r, AcquireResult::kAssigned);

  // a renews its lease at every tick: b never serves the study meanwhile, however far the
  // coordinators' clocks run (the database's decides).
  std::vector<std::string> revoked;
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(2);
    a->Tick();
    b->Tick();
    ASSERT_TRUE(a->Heartbeat(worker.id, {lease.lease_id}, &revoked).ok());
    EXPECT_FALSE(Serves(*b, id)) << "at tick " << i;
  }
  EXPECT_TRUE(revoked.empty());

  // a stops (killed: no renewals); once its lease has expired, b takes the study over, and the
  // worker's trial carries on there: b knows the worker and its lease.
  ASSERT_TRUE(TakesOver(*b, id));
  ASSERT_TRUE(b->Heartbeat(worker.id, {lease.lease_id}, &revoked).ok());
  EXPECT_TRUE(revoked.empty());
  search::Decision d;
  EXPECT_TRUE(
      b->ReportProgress(worker.id, lease.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());

  // a was only stalled: its next renewal finds the lease taken, and it stops serving.
  a->Tick();
  EXPECT_FALSE(Serves(*a, id));
}

// The fencing token (issue 31): a coordinator that stalled past its lease still believes it
// serves the study when it wakes, before any renewal of its own. Every write it then makes for
// the study (a report, a completion, an acquisition) is refused by the database, none lands,
// and it lets the study go; the new owner's writes go on.
TEST_P(StudyLeaseTest, AStalledOwnerHasEveryWriteRefusedOnceAnotherTookTheStudyOver) {
  auto a = Open("a");
  int64_t id = 0;
  std::vector<std::string> errors;
  ASSERT_TRUE(a->CreateStudy(kConfig, "test.yaml", &id, &errors).ok());
  const WorkerRecord worker = Register(*a, "w"), other = Register(*a, "v");
  AcquireResult r;
  Assignment lease;
  ASSERT_TRUE(a->AcquireTrial(worker.id, &r, &lease).ok());
  ASSERT_EQ(r, AcquireResult::kAssigned);
  search::Decision d;
  ASSERT_TRUE(
      a->ReportProgress(worker.id, lease.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());

  auto b = Open("b");
  ASSERT_TRUE(TakesOver(*b, id));  // a never ticks: stalled

  const Status report =
      a->ReportProgress(worker.id, lease.lease_id, 2, 2, {{"val_accuracy", 0.6}}, "", &d);
  EXPECT_FALSE(report.ok()) << "a's report was written after b took the study over";
  EXPECT_EQ(report.code, Status::Code::kNotFound) << report.message;
  EXPECT_FALSE(a->CompleteTrial(worker.id, lease.lease_id, {{"val_accuracy", 0.6}}).ok());
  Assignment second;
  const Status acquired = a->AcquireTrial(other.id, &r, &second);
  EXPECT_FALSE(acquired.ok() && r == AcquireResult::kAssigned)
      << "a handed out trial " << second.number << " after b took the study over";

  auto store = OpenStore(db_);
  const auto reports = store->ListReports(id);
  ASSERT_EQ(reports.size(), 1u) << "a's second report landed";
  EXPECT_EQ(reports[0].epoch, 1);
  const auto trials = store->ListTrials(id);
  ASSERT_EQ(trials.size(), 1u) << "a's acquisition made a trial";
  EXPECT_EQ(trials[0].state, search::TrialState::kRunning) << "a's completion landed";
  const auto segments = store->ListSegments(id);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_FALSE(segments[0].end.has_value()) << "a closed the trial's segment";

  // a lets the study go at its next tick; b, its owner, records the worker's report.
  a->Tick();
  EXPECT_FALSE(Serves(*a, id));
  std::vector<std::string> revoked;
  ASSERT_TRUE(b->Heartbeat(worker.id, {lease.lease_id}, &revoked).ok());
  EXPECT_TRUE(
      b->ReportProgress(worker.id, lease.lease_id, 2, 2, {{"val_accuracy", 0.6}}, "", &d).ok());
  EXPECT_EQ(store->ListReports(id).size(), 2u);
}

// A clean stop releases the lease: another coordinator takes the study at its next look,
// without waiting for the lease to expire.
TEST_P(StudyLeaseTest, ReleasedLeasesAreTakenAtOnce) {
  auto a = Open("a");
  int64_t id = 0;
  std::vector<std::string> errors;
  ASSERT_TRUE(a->CreateStudy(kConfig, "test.yaml", &id, &errors).ok());
  auto b = Open("b");
  a->ReleaseStudyLeases();
  clock_.Advance(1);
  b->Tick();
  EXPECT_TRUE(Serves(*b, id));
}

INSTANTIATE_TEST_SUITE_P(Stores, StudyLeaseTest, ::testing::Values("Sqlite", "Postgres"),
                         [](const auto& info) { return info.param; });

// Without study leases (a SQLite --db), a coordinator serves every study, as before.
TEST(StudyLeases, SharedDatabaseOptionsLeaseOnlyPostgres) {
  EXPECT_EQ(SharedDatabaseOptions("run/sift.db", "127.0.0.1:7070", 0).study_lease_s, 0);
  const auto o = SharedDatabaseOptions("postgresql://sift@db/sift", "0.0.0.0:7070", 0);
  EXPECT_EQ(o.study_lease_s, 15);
  EXPECT_NE(o.owner.find("/0.0.0.0:7070"), std::string::npos) << o.owner;
  const auto any_port = SharedDatabaseOptions("postgresql://sift@db/sift", "127.0.0.1:0", 4);
  EXPECT_EQ(any_port.study_lease_s, 4);
  EXPECT_NE(any_port.owner.find("/pid"), std::string::npos) << any_port.owner;
}

}  // namespace study_lease_test
}  // namespace sift::coordinator

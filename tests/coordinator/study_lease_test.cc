// Two coordinators on one database: the study lease decides which one serves a study, and the
// other takes it over, with its running trial's lease and worker, once the first stops renewing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "coordinator/coordinator.h"
#include "tests/coordinator/test_clock.h"

namespace sift::coordinator {
namespace {

constexpr const char* kConfig = R"(name: leased
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
trainer: {model: mlp}
budget: {max_trials: 2, max_epochs: 3}
seed: 5
)";

class StudyLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (std::filesystem::temp_directory_path() /
           ("sift-lease-" + std::to_string(getpid()) + ".db"))
              .string();
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + s);
    std::filesystem::remove_all(db_ + ".checkpoints");
  }
  std::unique_ptr<Coordinator> Open(const std::string& owner) {
    CoordinatorOptions o;
    o.clock = clock_.fn();
    o.lease_timeout_s = 10;
    o.study_lease_s = 6;
    o.owner = owner;
    o.checkpoint_dir = db_ + ".checkpoints";
    return std::make_unique<Coordinator>(OpenSqliteStore(db_), o);
  }
  static bool Serves(Coordinator& c, int64_t id) {
    StudySummary s;
    return c.GetStudy(id, &s).ok();
  }

  testing::TestClock clock_;
  std::string db_;
};

TEST_F(StudyLeaseTest, OnlyTheHolderServesAndAnotherTakesOverWhenItStopsRenewing) {
  auto a = Open("a");
  int64_t id = 0;
  std::vector<std::string> errors;
  ASSERT_TRUE(a->CreateStudy(kConfig, "test.yaml", &id, &errors).ok());
  auto b = Open("b");  // started after the study: it finds the study leased to a
  EXPECT_TRUE(Serves(*a, id));
  EXPECT_FALSE(Serves(*b, id));

  WorkerRecord in, worker;
  in.name = "w";
  in.instance_type = "x";
  in.market = "spot";
  in.price_per_hour = 3.6;
  ASSERT_TRUE(a->RegisterWorker(in, &worker).ok());
  AcquireResult r;
  Assignment lease;
  ASSERT_TRUE(a->AcquireTrial(worker.id, &r, &lease).ok());
  ASSERT_EQ(r, AcquireResult::kAssigned);

  // a renews its lease for far longer than one lease: b never serves the study meanwhile.
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
  clock_.Advance(4);
  b->Tick();
  EXPECT_FALSE(Serves(*b, id)) << "taken before the lease expired";
  clock_.Advance(3);
  b->Tick();
  ASSERT_TRUE(Serves(*b, id));
  ASSERT_TRUE(b->Heartbeat(worker.id, {lease.lease_id}, &revoked).ok());
  EXPECT_TRUE(revoked.empty());
  search::Decision d;
  EXPECT_TRUE(b->ReportProgress(worker.id, lease.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d)
                  .ok());

  // a was only stalled: its next renewal finds the lease taken, and it stops serving.
  a->Tick();
  EXPECT_FALSE(Serves(*a, id));
}

// A clean stop releases the lease: another coordinator takes the study at its next look,
// without waiting for the lease to expire.
TEST_F(StudyLeaseTest, ReleasedLeasesAreTakenAtOnce) {
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

// Without study leases (a SQLite --db), a coordinator serves every study, as before.
TEST_F(StudyLeaseTest, SharedDatabaseOptionsLeaseOnlyPostgres) {
  EXPECT_EQ(SharedDatabaseOptions("run/sift.db", "127.0.0.1:7070", 0).study_lease_s, 0);
  const auto o = SharedDatabaseOptions("postgresql://sift@db/sift", "0.0.0.0:7070", 0);
  EXPECT_EQ(o.study_lease_s, 15);
  EXPECT_NE(o.owner.find("/0.0.0.0:7070"), std::string::npos) << o.owner;
  const auto any_port = SharedDatabaseOptions("postgresql://sift@db/sift", "127.0.0.1:0", 4);
  EXPECT_EQ(any_port.study_lease_s, 4);
  EXPECT_NE(any_port.owner.find("/pid"), std::string::npos) << any_port.owner;
}

}  // namespace
}  // namespace sift::coordinator

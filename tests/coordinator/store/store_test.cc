// Contract tests every Store implementation passes: SQLite in memory and on disk, PostgreSQL.
#include "coordinator/store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "coordinator/cost/ledger.h"
#include "tests/pg_server.h"

namespace sift::coordinator {
namespace store_test {

// A database file and the WAL and shared-memory files SQLite keeps beside it.
void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Each kind of store: SQLite in memory and in a file, PostgreSQL (a fresh database on this
// binary's server, tests/pg_server.h).
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "SqliteFile") {
      path_ = std::filesystem::temp_directory_path() /
              ("sift-store-" + std::to_string(getpid()) + ".db");
      std::filesystem::remove(path_);
      store_ = OpenSqliteStore(path_.string());
    } else if (GetParam() == "Postgres") {
      std::string why;
      const std::string url = sift::testing::NewTestDatabase(&why);
      if (url.empty()) GTEST_SKIP() << why;
      store_ = OpenStore(url);
    } else {
      store_ = OpenSqliteStore(":memory:");
    }
  }
  void TearDown() override {
    store_.reset();
    if (!path_.empty()) {
      for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(path_.string() + suffix);
      }
    }
  }
  std::filesystem::path path_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, StudiesTrialsReportsRoundTripWithTypes) {
  StudyRecord s;
  s.name = "a";
  s.config_text = "name: a";
  s.created_at = 10;
  const int64_t id = store_->CreateStudy(s);
  TrialRecord t;
  t.study_id = id;
  t.number = 0;
  t.params = {
      {"lr", 0.001}, {"hidden", int64_t{128}}, {"opt", std::string("adam")}, {"whole", 1.0}};
  store_->InsertTrial(t);
  auto trials = store_->ListTrials(id);
  ASSERT_EQ(trials.size(), 1u);
  // Types survive the trip: an int stays int, 1.0 stays a double.
  EXPECT_EQ(trials[0].params, t.params);
  EXPECT_TRUE(std::holds_alternative<double>(trials[0].params.at("whole")));

  ReportRecord r;
  r.study_id = id;
  r.number = 0;
  r.epoch = 1;
  r.metrics = {{"val_accuracy", 0.8}};
  r.lease_id = "L-1";
  r.seq = 1;
  r.decision = "CONTINUE";
  r.checkpoint = "trial-0-e1.ckpt";
  store_->InsertReport(r);
  ASSERT_TRUE(store_->FindReport("L-1", 1).has_value());
  EXPECT_EQ(store_->FindReport("L-1", 1)->checkpoint, "trial-0-e1.ckpt");
  EXPECT_FALSE(store_->FindReport("L-1", 2).has_value());
  // (lease, seq) is unique: a second insert of the same report is refused by the database.
  EXPECT_ANY_THROW(store_->InsertReport(r));
  EXPECT_EQ(store_->ListReports(id).size(), 1u);
}

TEST_P(StoreTest, AtomicallyRollsBackEverythingOnThrow) {
  StudyRecord s;
  s.name = "a";
  const int64_t id = store_->CreateStudy(s);
  EXPECT_THROW(store_->Atomically([&] {
    TrialRecord t;
    t.study_id = id;
    store_->InsertTrial(t);
    throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_TRUE(store_->ListTrials(id).empty());
}

TEST_P(StoreTest, SegmentsOpenAndClose) {
  SegmentRecord seg;
  seg.lease_id = "L-1";
  seg.worker_id = "w";
  seg.study_id = 1;
  seg.start = 100;
  seg.price_per_hour = 3.6;
  store_->OpenSegment(seg);
  auto open = store_->ListSegments(1);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_FALSE(open[0].end.has_value());
  EXPECT_DOUBLE_EQ(SegmentDollars(open[0], /*now=*/110), 0.01);
  store_->CloseSegment(2, "L-1", 120, "another study's");  // not this segment
  EXPECT_FALSE(store_->ListSegments(1)[0].end.has_value());
  store_->CloseSegment(1, "L-1", 120, "completed");
  store_->CloseSegment(1, "L-1", 500, "again");  // closing twice keeps the first end
  auto closed = store_->ListSegments(1);
  EXPECT_DOUBLE_EQ(*closed[0].end, 120);
  EXPECT_EQ(closed[0].end_reason, "completed");
}

// A diverging trial reports NaN and infinities: every read path gives them back exactly (the
// JSON `null` they were once stored as broke the replay lookup, ListTrials and restarts).
TEST_P(StoreTest, NonFiniteMetricsRoundTripExactly) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  StudyRecord s;
  s.name = "diverge";
  const int64_t id = store_->CreateStudy(s);
  TrialRecord t;
  t.study_id = id;
  t.final_metrics = {{"test_accuracy", 0.1}, {"peak_rss_mb", inf}};
  store_->InsertTrial(t);
  store_->SetFinalMetrics(id, 0, {{"test_accuracy", -inf}, {"x", nan}});
  ReportRecord r;
  r.study_id = id;
  r.epoch = 1;
  r.metrics = {{"train_loss", nan}, {"val_loss", inf}, {"g", -inf}, {"val_accuracy", 0.1}};
  r.lease_id = "L-1";
  r.seq = 1;
  r.decision = "STOP";
  store_->InsertReport(r);
  for (const auto& got : {*store_->FindReport("L-1", 1), store_->ListReports(id).at(0)}) {
    EXPECT_TRUE(std::isnan(got.metrics.at("train_loss")));
    EXPECT_EQ(got.metrics.at("val_loss"), inf);
    EXPECT_EQ(got.metrics.at("g"), -inf);
    EXPECT_EQ(got.metrics.at("val_accuracy"), 0.1);
  }
  const auto trials = store_->ListTrials(id);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].final_metrics.at("test_accuracy"), -inf);
  EXPECT_TRUE(std::isnan(trials[0].final_metrics.at("x")));
}

TEST_P(StoreTest, RedoneWorkIsWasteOnceAndTheEndAddsItsOwn) {
  SegmentRecord seg;
  seg.lease_id = "L-1";
  seg.study_id = 1;
  seg.start = 100;
  seg.price_per_hour = 3.6;
  store_->OpenSegment(seg);
  store_->SetRedoneSeconds(1, "L-1", 4);
  store_->SetRedoneSeconds(1, "L-1", 4);  // a retried report
  store_->CloseSegment(1, "L-1", 120, "expired", "", 3);
  store_->SetRedoneSeconds(1, "L-1", 50);  // closed: no change
  EXPECT_DOUBLE_EQ(store_->ListSegments(1).at(0).wasted_seconds, 7);
}

TEST_P(StoreTest, StudiesUpdateAndListInIdOrderWithExactValues) {
  StudyRecord a;
  a.name = "it's \"quoted\" — ünïcode";
  a.config_text = "name: a\nseed: 1\n";
  a.created_at = 1764000000.123456789;  // a unix time with sub-microsecond digits
  const int64_t ida = store_->CreateStudy(a);
  StudyRecord b = a;
  b.name = "b";
  const int64_t idb = store_->CreateStudy(b);
  EXPECT_GT(idb, ida);
  store_->UpdateStudy(ida, StudyState::kCompleted, "max_trials reached", 0.1 + 0.2);
  const auto all = store_->ListStudies();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, ida);
  EXPECT_EQ(all[0].name, a.name);
  EXPECT_EQ(all[0].config_text, a.config_text);
  EXPECT_EQ(all[0].created_at, a.created_at);  // bit for bit
  EXPECT_EQ(all[0].state, StudyState::kCompleted);
  EXPECT_EQ(all[0].end_reason, "max_trials reached");
  EXPECT_EQ(all[0].ended_at, 0.1 + 0.2);
  EXPECT_EQ(all[1].state, StudyState::kRunning);
  EXPECT_FALSE(store_->GetStudy(idb + 100).has_value());
}

// `sift migrate` keeps ids; a new study after it gets a fresh one, and a taken id is refused.
TEST_P(StoreTest, AStudyCreatedWithAnIdKeepsItAndTheNextIsNew) {
  StudyRecord s;
  s.name = "migrated";
  s.id = 42;
  EXPECT_EQ(store_->CreateStudy(s), 42);
  EXPECT_EQ(store_->GetStudy(42)->name, "migrated");
  EXPECT_ANY_THROW(store_->CreateStudy(s));
  s.id = 0;
  EXPECT_GT(store_->CreateStudy(s), 42);
}

TEST_P(StoreTest, TrialStateEventsWorkersAndIdleTime) {
  StudyRecord s;
  s.name = "a";
  const int64_t id = store_->CreateStudy(s);
  for (int64_t n : {1, 0}) {
    TrialRecord t;
    t.study_id = id;
    t.number = n;
    t.state = search::TrialState::kRunning;
    store_->InsertTrial(t);
  }
  store_->UpdateTrialState(id, 1, search::TrialState::kCompleted, "done", 7.5);
  store_->SetFinalMetrics(id, 1, {{"test_accuracy", 0.875}});
  auto trials = store_->ListTrials(id);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].number, 0);  // in number order
  EXPECT_EQ(trials[1].state, search::TrialState::kCompleted);
  EXPECT_EQ(trials[1].end_reason, "done");
  EXPECT_EQ(trials[1].ended_at, 7.5);
  EXPECT_EQ(trials[1].final_metrics.at("test_accuracy"), 0.875);

  store_->InsertStudyEvent({id, 2, "ann", "created", "cli"});
  store_->InsertStudyEvent({id, 1, "bob", "budget", R"({"max_trials":3})"});
  const auto events = store_->ListStudyEvents(id);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].user, "ann");  // in the order written, whatever their times
  EXPECT_EQ(events[1].detail, R"({"max_trials":3})");

  WorkerRecord w{"w-1", "vm", "c5.xlarge", "spot", 0.0681, "cpu", 4, 10};
  store_->UpsertWorker(w);
  w.market = "on-demand";
  store_->UpsertWorker(w);  // the same id again replaces it
  const auto workers = store_->ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].market, "on-demand");
  EXPECT_EQ(workers[0].price_per_hour, 0.0681);
  EXPECT_EQ(workers[0].threads, 4);

  store_->InsertIdleSegment({"w-1", id, 20, 30, 0.0681, "spot", "leased"});
  store_->InsertIdleSegment({"w-1", id, 5, 8, 0.0681, "spot", "shutdown"});
  store_->InsertIdleSegment({"w-1", 0, 1, 2, 0.0681, "spot", "lost"});
  const auto idle = store_->ListIdleSegments(id);
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].start, 5);  // in time order
  EXPECT_EQ(idle[1].end_reason, "leased");
  EXPECT_EQ(store_->ListIdleSegments(0).size(), 1u);
}

// Two coordinators on one database: the lease decides which serves a study, its owner renews
// it at the epoch it took it at, and another takes it only once it has expired (by the
// database's clock: a lease of -1 s has) or been released, raising the epoch.
TEST_P(StoreTest, StudyLeaseGoesToOneOwnerUntilItExpires) {
  EXPECT_EQ(store_->ClaimStudy(1, "a", /*lease_s=*/60, /*held_epoch=*/0), 1);
  EXPECT_EQ(store_->ClaimStudy(1, "b", 60, 0), 0);
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 1), 1);  // renewed
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 7), 0);  // not the epoch a holds
  EXPECT_EQ(store_->ClaimStudy(2, "b", 60, 0), 1);  // another study is free
  EXPECT_EQ(store_->ClaimStudy(1, "a", -1, 1), 1);  // renewed into the past: expired
  EXPECT_EQ(store_->ClaimStudy(1, "b", 60, 0), 2);  // taken over
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 1), 0);  // a's renewal finds it gone
  store_->ReleaseStudy(1, "a");                     // not a's to give: no change
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 0), 0);
  store_->ReleaseStudy(1, "b");
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 0), 3);  // the epoch never goes back
  EXPECT_EQ(store_->ClaimStudy(1, "a", 60, 0), 4);  // a restarted owner takes it again
}

// The fencing token: a transaction whose epoch is no longer the lease's writes nothing.
TEST_P(StoreTest, AWriteAtAnOldEpochIsRefusedWhole) {
  StudyRecord s;
  s.name = "a";
  const int64_t id = store_->CreateStudy(s);
  ASSERT_EQ(store_->ClaimStudy(id, "a", -1, 0), 1);
  ASSERT_EQ(store_->ClaimStudy(id, "b", 60, 0), 2);
  TrialRecord t;
  t.study_id = id;
  store_->Atomically([&] {
    store_->CheckStudyLease(id, 2);
    store_->InsertTrial(t);
  });
  t.number = 1;
  try {
    store_->Atomically([&] {
      store_->CheckStudyLease(id, 1);
      store_->InsertTrial(t);
    });
    FAIL() << "epoch 1 was not refused";
  } catch (const StudyFenced& e) {
    EXPECT_EQ(e.study_id, id);
    EXPECT_EQ(e.held, 1);
    EXPECT_EQ(e.current, 2);
    EXPECT_NE(std::string(e.what()).find("epoch 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store_->ListTrials(id).size(), 1u);
  EXPECT_THROW(store_->Atomically([&] { store_->CheckStudyLease(id + 1, 1); }), StudyFenced)
      << "a study never leased";
}

TEST_P(StoreTest, EvaluationsAreReplacedWholeAndListedPerStudy) {
  StudyRecord study;
  study.name = "s";
  study.config_text = "x";
  const int64_t id = store_->CreateStudy(study);
  EvaluationRecord e;
  e.study_id = id;
  e.number = 3;
  e.requested_by = "best trial";
  e.requested_at = 10;
  store_->UpsertEvaluation(e);
  e.state = EvaluationState::kDone;
  e.ended_at = 12;
  e.metrics = {{"test_accuracy", 0.9}, {"test_class_0_total", 5}};
  store_->UpsertEvaluation(e);
  const auto all = store_->ListEvaluations(id);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].number, 3);
  EXPECT_EQ(all[0].state, EvaluationState::kDone);
  EXPECT_EQ(all[0].requested_by, "best trial");
  EXPECT_EQ(all[0].ended_at, 12);
  EXPECT_EQ(all[0].metrics, e.metrics);
  EXPECT_TRUE(store_->ListEvaluations(id + 1).empty());
}

TEST_P(StoreTest, AnExploitIsRecordedWithBothParamsAndSetsTheTrialsParams) {
  StudyRecord study;
  study.name = "s";
  study.config_text = "x";
  const int64_t id = store_->CreateStudy(study);
  TrialRecord t;
  t.study_id = id;
  t.number = 2;
  t.params = {{"lr", 0.01}, {"hidden", int64_t{64}}};
  store_->InsertTrial(t);
  ExploitRecord e;
  e.study_id = id;
  e.number = 2;
  e.epoch = 4;
  e.from_trial = 0;
  e.params_before = t.params;
  e.params_after = {{"lr", 0.012}, {"hidden", int64_t{32}}};
  e.reason = "pbt: epoch 4: copies trial 0";
  e.created_at = 7.5;
  store_->Atomically([&] { store_->InsertExploit(e); });
  const auto all = store_->ListExploits(id);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].number, 2);
  EXPECT_EQ(all[0].epoch, 4);
  EXPECT_EQ(all[0].from_trial, 0);
  EXPECT_EQ(all[0].params_before, e.params_before);
  EXPECT_EQ(all[0].params_after, e.params_after);
  EXPECT_EQ(all[0].reason, e.reason);
  EXPECT_EQ(all[0].created_at, 7.5);
  EXPECT_EQ(store_->ListTrials(id).at(0).params, e.params_after);
  EXPECT_TRUE(store_->ListExploits(id + 1).empty());
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest,
                         ::testing::Values("SqliteMemory", "SqliteFile", "Postgres"),
                         [](const auto& info) { return info.param; });

// Built with or without libpqxx, a postgresql:// database never falls through to SQLite: it
// opens PostgreSQL, or names the missing support (and never the URL's password).
TEST(OpenStore, PostgresUrlNeverOpensASqliteFile) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://u@h/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://u@h/db"));
  EXPECT_FALSE(IsPostgresUrl("run/sift.db"));
  EXPECT_EQ(RedactDbUrl("postgresql://sift:s3cret@db:5432/sift?password=x&sslmode=require"),
            "postgresql://sift:***@db:5432/sift?password=***&sslmode=require");
  try {
    // Port 1 on loopback: nothing listens there.
    OpenStore("postgresql://sift:s3cret@127.0.0.1:1/nodb?connect_timeout=5");
    FAIL() << "opened";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
    EXPECT_NE(what.find("postgresql://sift:***@127.0.0.1:1/nodb"), std::string::npos) << what;
#ifdef SIFT_HAVE_POSTGRES
    EXPECT_NE(what.find("cannot open the database"), std::string::npos) << what;
#else
    EXPECT_NE(what.find("built without PostgreSQL support"), std::string::npos) << what;
#endif
  }
  EXPECT_FALSE(std::filesystem::exists("postgresql:"));
}

// Version 1 wrote no checkpoint column: it checkpointed every reported epoch by name.
TEST(SqliteStore, UpgradesAVersion1DatabaseKeepingItsResumePoints) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sift-store-v1-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(
        "CREATE TABLE reports(study_id INTEGER NOT NULL, number INTEGER NOT NULL,"
        " epoch INTEGER NOT NULL, metrics TEXT NOT NULL, lease_id TEXT NOT NULL,"
        " seq INTEGER NOT NULL, decision TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',"
        " created_at REAL NOT NULL, UNIQUE(lease_id, seq));"
        "INSERT INTO reports VALUES(1, 3, 2, '{\"val_accuracy\":0.5}', 'L-9', 2, 'CONTINUE',"
        " '', 12.5);"
        "PRAGMA user_version=1;");
  }
  auto store = OpenSqliteStore(path.string());
  auto reports = store->ListReports(1);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].checkpoint, "trial-3-e2.ckpt");
  EXPECT_EQ(reports[0].metrics.at("val_accuracy"), 0.5);
  store.reset();
  std::filesystem::remove(path);
}

// The first version 1 (before spot notices) had segments without a checkpoint or waste; the
// version-2 databases opened from it kept that shape. Both open, keep their ledger, and take
// preemptions afterwards.
TEST(SqliteStore, UpgradesSegmentsThatPredateSpotNotices) {
  for (const int version : {1, 2}) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("sift-store-old-" + std::to_string(getpid()) + ".db");
    std::filesystem::remove(path);
    {
      SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec(
          "CREATE TABLE segments(lease_id TEXT PRIMARY KEY, worker_id TEXT NOT NULL,"
          " study_id INTEGER NOT NULL, number INTEGER NOT NULL, start REAL NOT NULL, end REAL,"
          " price_per_hour REAL NOT NULL, market TEXT NOT NULL,"
          " end_reason TEXT NOT NULL DEFAULT '', start_epoch INTEGER NOT NULL DEFAULT 0);"
          "INSERT INTO segments VALUES('L-1', 'w-1', 1, 0, 100, 160, 0.036, 'spot', 'expired', 0);"
          "INSERT INTO segments VALUES('L-2', 'w-2', 1, 1, 110, NULL, 0.036, 'spot', '', 0);"
          "PRAGMA user_version=" +
          std::to_string(version) + ";");
    }
    auto store = OpenSqliteStore(path.string());
    auto segments = store->ListSegments(1);
    ASSERT_EQ(segments.size(), 2u) << "version " << version;
    EXPECT_DOUBLE_EQ(*segments[0].end, 160);
    EXPECT_EQ(segments[0].wasted_seconds, 0);
    EXPECT_EQ(segments[0].checkpoint, "");
    EXPECT_FALSE(segments[1].end);
    store->CloseSegment(1, "L-2", 130, "preempted", "trial-1-e3.ckpt", 4.5);
    segments = store->ListSegments(1);
    EXPECT_EQ(segments[1].checkpoint, "trial-1-e3.ckpt");
    EXPECT_DOUBLE_EQ(segments[1].wasted_seconds, 4.5);
    store.reset();
    {
      SQLite::Database db(path.string());
      EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 3);
    }
    RemoveDatabase(path.string());
  }
}

TEST(SqliteStore, UnopenablePathNamesTheFile) {
  try {
    OpenSqliteStore("/nonexistent-dir/x/sift.db");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x/sift.db"), std::string::npos);
  }
}

// A read-only open (`sift report`, `sift status --db`) upgrades nothing, so it names the file, the
// version it found and what upgrades it; a newer sift's database is refused by either open.
TEST(SqliteStore, SchemaVersionsItCannotOpenAreNamed) {
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("sift-store-version-" + std::to_string(getpid()) + ".db"))
                               .string();
  std::filesystem::remove(file);
  const auto error = [](const std::function<void()>& open) -> std::string {
    try {
      open();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "opened";
  };
  const auto read_only = [&] { OpenSqliteStoreReadOnly(file); };
  const auto set_version = [&](int version) {
    SQLite::Database db(file, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("PRAGMA user_version=" + std::to_string(version));
  };
  {
    SQLite::Database db(file, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE notes(text TEXT)");
  }
  EXPECT_EQ(error(read_only), file + ": not a sift database");
  set_version(3);
  EXPECT_EQ(error(read_only), file + ": not a sift database");  // the version, but no studies
  OpenSqliteStore(file).reset();                                // creates the tables
  EXPECT_EQ(error(read_only), "opened");
  set_version(2);
  EXPECT_EQ(error(read_only), file + ": database schema version 2, this sift reads 3 (`sift " +
                                  "coordinator --db " + file + "` upgrades it)");
  set_version(4);
  EXPECT_EQ(error(read_only), file + ": database schema version 4, this sift reads 3");
  EXPECT_EQ(error([&] { OpenSqliteStore(file); }),
            file + ": database schema version 4 is newer than this sift (3)");
  RemoveDatabase(file);
}

// Databases written before non-finite values were spelled out hold them as JSON null: they open,
// and the nulls read as NaN everywhere (a coordinator restarted on one used to exit at start).
TEST(SqliteStore, NullMetricsOfOlderDatabasesReadAsNaN) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sift-store-null-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  {
    auto store = OpenSqliteStore(path.string());
    StudyRecord s;
    s.name = "old";
    const int64_t id = store->CreateStudy(s);
    TrialRecord t;
    t.study_id = id;
    store->InsertTrial(t);
    ReportRecord r;
    r.study_id = id;
    r.epoch = 1;
    r.lease_id = "L-1";
    r.seq = 1;
    store->InsertReport(r);
  }
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE);
    db.exec(
        "UPDATE reports SET metrics = '{\"train_loss\":null,\"val_accuracy\":0.1}';"
        "UPDATE trials SET final_metrics = '{\"test_accuracy\":null}'");
  }
  auto store = OpenSqliteStore(path.string());
  EXPECT_TRUE(std::isnan(store->FindReport("L-1", 1)->metrics.at("train_loss")));
  EXPECT_EQ(store->ListReports(1).at(0).metrics.at("val_accuracy"), 0.1);
  EXPECT_TRUE(std::isnan(store->ListTrials(1).at(0).final_metrics.at("test_accuracy")));
  // Something that is no metric at all is named, not a bare json exception.
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE reports SET metrics = '{\"val_loss\":[1]}'");
  }
  try {
    store->ListReports(1);
    FAIL() << "read a list as a metric";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("report of trial 0 epoch 1.val_loss"), std::string::npos)
        << e.what();
  }
  store.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace store_test
}  // namespace sift::coordinator

// Contract tests every Store implementation passes; today SQLite in memory and on disk.
#include "coordinator/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace sift::coordinator {
namespace {

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      path_ = std::filesystem::temp_directory_path() /
              ("sift-store-" + std::to_string(getpid()) + ".db");
      std::filesystem::remove(path_);
      store_ = OpenSqliteStore(path_.string());
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
  EXPECT_DOUBLE_EQ(open[0].Dollars(/*now=*/110), 0.01);
  store_->CloseSegment("L-1", 120, "completed");
  store_->CloseSegment("L-1", 500, "again");  // closing twice keeps the first end
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
  store_->SetRedoneSeconds("L-1", 4);
  store_->SetRedoneSeconds("L-1", 4);  // a retried report
  store_->CloseSegment("L-1", 120, "expired", "", 3);
  store_->SetRedoneSeconds("L-1", 50);  // closed: no change
  EXPECT_DOUBLE_EQ(store_->ListSegments(1).at(0).wasted_seconds, 7);
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

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "File" : "Memory"; });

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
    store->CloseSegment("L-2", 130, "preempted", "trial-1-e3.ckpt", 4.5);
    segments = store->ListSegments(1);
    EXPECT_EQ(segments[1].checkpoint, "trial-1-e3.ckpt");
    EXPECT_DOUBLE_EQ(segments[1].wasted_seconds, 4.5);
    store.reset();
    SQLite::Database db(path.string());
    EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 3);
    std::filesystem::remove(path);
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
    db.exec("UPDATE reports SET metrics = '{\"train_loss\":null,\"val_accuracy\":0.1}';"
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

}  // namespace
}  // namespace sift::coordinator

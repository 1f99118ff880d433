// Operating a study with real processes: workers that leave when there is no work (and what
// their idle time costs), and exit codes and paths that tell the truth (issue 17, parts 1 and 4).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "coordinator/store/store.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace operate_test {

std::string Config(const std::string& name, const std::string& data_dir, int trials) {
  return "name: " + name + R"(
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
trainer: {model: mlp, depth: 1, hidden: 32, batch_size: 128}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: )" +
         std::to_string(trials) + R"(, max_epochs: 1}
seed: 3
data: {dir: )" +
         data_dir + R"(, train_limit: 512, val_size: 128, test_limit: 100}
)";
}

const std::string kData = "/usr/share/datasets/fashion-mnist";

std::unique_ptr<Process> StartWorker(const std::string& dir, const std::string& address,
                                     const std::string& name,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = WorkerBase(address, name, dir, {"--memory-limit-mb", "2048"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(argv, dir + "/" + name + ".log");
}

// Starts a coordinator in `dir` and submits `config` as study 1; returns its address ("" if not).
std::string StartWithStudy(const std::string& dir, std::unique_ptr<Process>* coordinator,
                           const std::string& config) {
  const int port = StartCoordinator(coordinator, dir);
  if (port <= 0) return "";
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string output;
  const int code = RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", config),
                               "--coordinator", address},
                              &output);
  EXPECT_EQ(code, 0) << output;
  return code == 0 ? address : "";
}

TEST(IdleExit, WorkerLeavesAStandaloneCoordinatorOnceItsStudyIsDoneAndItsIdleTimeIsReported) {
  const std::string dir = TempDir("idle-after-study");
  std::unique_ptr<Process> coordinator;
  const std::string address = StartWithStudy(dir, &coordinator, Config("idle", kData, 2));
  ASSERT_FALSE(address.empty());
  std::string output;
  auto worker =
      StartWorker(dir, address, "spot-1", {"--exit-when-idle", "--idle-exit-seconds", "1"});
  EXPECT_EQ(WaitForStudyEnd(address, 180).state(), v1::STUDY_COMPLETED) << coordinator->Log();
  // Before: a standalone coordinator only ever answered NO_WORK and the worker stayed (billed).
  ASSERT_EQ(worker->Wait(60), 0) << worker->Log();
  EXPECT_NE(worker->Log().find("no more work for this worker"), std::string::npos) << worker->Log();
  EXPECT_NE(coordinator->Log().find("told to leave"), std::string::npos) << coordinator->Log();
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0);

  {
    SQLite::Database db(dir + "/sift.db");
    // Lease-free: every segment closed before it left.
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end IS NULL").getInt(), 0);
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM idle_segments WHERE after_study_id = 1 AND "
                            "end_reason = 'idle-exit' AND end - start >= 1")
                  .getInt(),
              1);
  }
  // The report shows the idle cost apart from the trials, and both frontiers, labelled; --out
  // creates a folder whose parents do not exist yet.
  const std::string out = dir + "/reports/not/yet";
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "report", "--db", dir + "/sift.db", "--out", out}, &output),
      0)
      << output;
  EXPECT_NE(output.find("worker-seconds waiting for work after this study's trials"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("idle: $0.000000"), std::string::npos) << output;
  EXPECT_NE(output.find("Pareto frontier, completed trials only"), std::string::npos) << output;
  EXPECT_NE(output.find("Pareto frontier, all trials"), std::string::npos) << output;
  std::ifstream json_file(out + "/results.json");
  ASSERT_TRUE(json_file.good());
  const auto j = nlohmann::json::parse(json_file);
  EXPECT_GT(j["study"]["idle_seconds"].get<double>(), 1.0);
  EXPECT_GT(j["study"]["idle_dollars"].get<double>(), 0.0);
  EXPECT_FALSE(j["pareto_frontiers"]["completed"]["trials"].empty());
}

TEST(IdleExit, WorkerStartedWithNoStudyAtAllLeaves) {
  const std::string dir = TempDir("idle-no-study");
  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  auto worker = StartWorker(dir, "127.0.0.1:" + std::to_string(port), "early",
                            {"--exit-when-idle", "--idle-exit-seconds", "1"});
  ASSERT_EQ(worker->Wait(60), 0) << worker->Log();
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0);
  SQLite::Database db(dir + "/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM idle_segments WHERE after_study_id = 0 AND "
                          "end_reason = 'idle-exit'")
                .getInt(),
            1);
}

TEST(ExitCodes, MissingDataFailsValidateAndRunBeforeAnyTrial) {
  const std::string dir = TempDir("missing-data");
  const std::string config =
      WriteFile(dir + "/study.yaml", Config("nodata", dir + "/no-such-data", 2));
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", config}, &output), 2) << output;
  EXPECT_NE(output.find("data.dir '" + dir + "/no-such-data': no such directory"),
            std::string::npos)
      << output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", config, "--no-data-check"}, &output), 0)
      << output;
  EXPECT_NE(RunCommand({BinDir() + "/sift", "run", config, "--out", dir + "/run", "--workers", "1"},
                       &output, 120),
            0)
      << output;
  EXPECT_NE(output.find("no such directory"), std::string::npos) << output;
}

TEST(ExitCodes, RunOfAStudyInWhichEveryTrialFailedEndsFailedAndExitsNonZero) {
  const std::string dir = TempDir("all-failed");
  // The files are there (so the checks pass) but are not IDX data: every trial fails to load.
  std::filesystem::create_directories(dir + "/data");
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                           "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}) {
    std::ofstream(dir + "/data/" + name) << "not a data set";
  }
  const std::string config = WriteFile(dir + "/study.yaml", Config("garbage", dir + "/data", 2));
  std::string output;
  const int code = RunCommand(
      {BinDir() + "/sift", "run", config, "--out", dir + "/run", "--workers", "1"}, &output, 180);
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("FAILED (every trial failed (2 of 2)"), std::string::npos) << output;
  EXPECT_NE(output.find("produced no result"), std::string::npos) << output;
  std::ifstream json_file(dir + "/run/results.json");
  ASSERT_TRUE(json_file.good());
  EXPECT_EQ(nlohmann::json::parse(json_file)["study"]["state"], "FAILED");
}

TEST(ExitCodes, WorkerWithoutTheDataHandsTheTrialBackInsteadOfFailingIt) {
  const std::string dir = TempDir("worker-no-data");
  std::unique_ptr<Process> coordinator;
  // The data lives "only on the workers", and this worker does not have it.
  const std::string address =
      StartWithStudy(dir, &coordinator, Config("elsewhere", dir + "/absent", 2));
  ASSERT_FALSE(address.empty());
  auto worker =
      StartWorker(dir, address, "no-data", {"--exit-when-idle", "--idle-exit-seconds", "1"});
  ASSERT_EQ(worker->Wait(60), 0) << worker->Log();
  EXPECT_NE(worker->Log().find("cannot run study 1: data.dir '" + dir + "/absent'"),
            std::string::npos)
      << worker->Log();
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0);
  SQLite::Database db(dir + "/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT state FROM studies WHERE id = 1").getString(), "RUNNING");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state = 'FAILED'").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state = 'PENDING' AND "
                          "end_reason LIKE '%cannot run it: data.dir%'")
                .getInt(),
            1);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end_reason = 'refused'").getInt(),
            1);
}

TEST(ExitCodes, ReportOnAMistypedDatabaseFailsAndCreatesNothing) {
  const std::string dir = TempDir("typo-db");
  const std::string typo = dir + "/sfit.db";
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "report", "--db", typo}, &output), 1) << output;
  EXPECT_NE(output.find("no such database: " + typo), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(typo));
}

// Issue 11: no exception reaches std::terminate (exit 134, "terminate called after throwing"). A
// database holding something that is no metric at all is refused by `sift report` and by a
// coordinator started on it, each naming what it could not read, with exit 1.
TEST(ExitCodes, AnUnreadableRecordIsNamedWithExit1NotAnAbort) {
  const std::string dir = TempDir("unreadable");
  const std::string db = dir + "/sift.db";
  std::filesystem::remove(db);
  {
    auto store = coordinator::OpenSqliteStore(db);
    coordinator::StudyRecord s;
    s.name = "broken";
    s.config_text = Config("broken", kData, 1);
    const int64_t id = store->CreateStudy(s);
    coordinator::TrialRecord t;
    t.study_id = id;
    store->InsertTrial(t);
    coordinator::ReportRecord r;
    r.study_id = id;
    r.epoch = 1;
    r.lease_id = "L-1";
    r.seq = 1;
    store->InsertReport(r);
  }
  SQLite::Database(db, SQLite::OPEN_READWRITE)
      .exec("UPDATE reports SET metrics = '{\"val_loss\":[1]}'");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "report", "--db", db}, &output), 1) << output;
  EXPECT_NE(output.find("val_loss"), std::string::npos) << output;
  EXPECT_EQ(output.find("terminate called"), std::string::npos) << output;
  Process c({BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db", db},
            dir + "/coordinator.log");
  EXPECT_EQ(c.Wait(30), 1) << c.Log();
  EXPECT_NE(c.Log().find("val_loss"), std::string::npos) << c.Log();
  EXPECT_EQ(c.Log().find("terminate called"), std::string::npos) << c.Log();
}

}  // namespace operate_test
}  // namespace sift::testing

// Command trials end to end: a real coordinator, real sift-worker processes, and a real program
// (a small Python script this test writes) that reports on stdout, checkpoints into
// SIFT_CHECKPOINT_DIR and obeys SIGTERM. Covers finishing, a scheduler's stop, a study pause
// resumed on another worker, a preemption resumed on another worker, a crash, a program that
// cannot start and a hang; and the XGBoost example's train.py resuming its booster after a
// preemption.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace command_trial_test {

namespace fs = std::filesystem;

// Epochs of `--epoch_seconds` each, up to SIFT_MAX_EPOCHS; the epoch count lives in the
// checkpoint folder, so a resumed lease continues where the last one saved. On SIGTERM it notes
// the signal in --marks, saves and leaves.
constexpr const char* kProgram = R"(import json, os, signal, sys, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
ckpt = os.environ["SIFT_CHECKPOINT_DIR"]
state = os.path.join(ckpt, "epoch.txt")
done = int(open(state).read()) if os.path.exists(state) else 0
if done:
    print("resumed at epoch %d" % done, file=sys.stderr, flush=True)
print("hello from the program; params " + os.environ["SIFT_PARAMS"] + " start " +
      os.environ["SIFT_EPOCH_START"] + " trial " + os.environ["SIFT_TRIAL"], flush=True)
def save(epoch):
    with open(state + ".tmp", "w") as f:
        f.write(str(epoch))
    os.replace(state + ".tmp", state)
def on_term(signum, frame):
    open(os.path.join(args["marks"], "sigterm-%s-%d" % (os.environ["SIFT_TRIAL"], os.getpid())), "w").close()
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
mode = args.get("mode", "finish")
for epoch in range(done + 1, int(os.environ["SIFT_MAX_EPOCHS"]) + 1):
    time.sleep(float(args.get("epoch_seconds", "0.05")))
    if mode == "crash" and epoch == 2:
        print("Traceback (most recent call last):\nValueError: boom at epoch 2", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang" and epoch == 2:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    save(epoch)
    acc = 0.5 if mode == "flat" else 0.5 + 0.01 * epoch
    print(json.dumps({"sift": {"epoch": epoch, "val_accuracy": acc, "train_loss": 1.0 / epoch}}), flush=True)
)";

class CommandTrials : public ::testing::Test {
 protected:
  // `report_timeout`: generous but where a hang is the point, so a slow start is never one.
  void Start(const std::string& name, const std::string& study, int report_timeout = 120,
             const std::string& command = "[python3, prog.py]") {
    dir_ = TempDir(name);
    fs::create_directories(dir_ + "/marks");
    WriteFile(dir_ + "/prog.py", kProgram);
    port_ = StartCoordinator(&coordinator_, dir_);
    ASSERT_GT(port_, 0);
    address_ = "127.0.0.1:" + std::to_string(port_);
    const std::string config = "name: " + name + "\n" + "trial: {command: " + command + ", " +
                               "report_timeout: " + std::to_string(report_timeout) +
                               ", grace_seconds: 5}\n" + study;
    std::string output;
    ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", WriteFile(dir_ + "/study.yaml", config),
                          "--coordinator", address_},
                         &output),
              0)
        << output;
  }

  std::unique_ptr<Process> Worker(const std::string& name) {
    return std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", address_, "--name",
                                 name, "--trial-log-dir", dir_ + "/logs-" + name},
        dir_ + "/" + name + ".log");
  }

  // Waits until `sql` (one number) reaches `at_least`; returns its last value.
  int64_t WaitFor(const std::string& sql, int64_t at_least, double timeout_s = 60) {
    SQLite::Database db(dir_ + "/sift.db", SQLite::OPEN_READONLY);
    int64_t v = 0;
    for (int i = 0; i < timeout_s * 20; ++i) {
      v = db.execAndGet(sql).getInt64();
      if (v >= at_least) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return v;
  }

  std::string Query(const std::string& sql) {
    SQLite::Database db(dir_ + "/sift.db", SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getString();
  }

  int SigtermMarks() {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_ + "/marks")) n += e.is_regular_file();
    return n;
  }

  void TearDown() override {
    if (coordinator_) {
      coordinator_->Signal(SIGTERM);
      coordinator_->Wait(30);
    }
  }

  std::string dir_, address_;
  int port_ = 0;
  std::unique_ptr<Process> coordinator_;
};

constexpr const char* kSpace = "search_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n";
constexpr const char* kObjective = "objective: {metric: val_accuracy, direction: maximize}\n";

TEST_F(CommandTrials, AProgramThatReportsEachEpochFinishes) {
  Start("cmd-finish", std::string(kSpace) + kObjective +
                          "trainer: {mode: finish, marks: marks}\n"
                          "budget: {max_trials: 1, max_epochs: 3}\n");
  auto w = Worker("w");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << w->Log();
  EXPECT_EQ(Query("SELECT state FROM trials"), "COMPLETED") << w->Log();
  EXPECT_EQ(Query("SELECT group_concat(epoch) FROM (SELECT epoch FROM reports ORDER BY epoch)"),
            "1,2,3");
  EXPECT_EQ(Query("SELECT checkpoint FROM reports WHERE epoch = 3"), "trial-0-e3.ckpt");
  // Its stdout is kept per trial: its own lines and the reports, with the parameters it got as
  // --name=value arguments and as SIFT_PARAMS.
  const std::string out = Read(dir_ + "/logs-w/study-1-trial-0.stdout.log");
  EXPECT_NE(out.find("hello from the program; params {\"lr\":"), std::string::npos) << out;
  EXPECT_NE(out.find("\"marks\":\"marks\",\"mode\":\"finish\"}"), std::string::npos) << out;
  EXPECT_NE(out.find("{\"sift\": {\"epoch\": 3"), std::string::npos) << out;
  EXPECT_EQ(SigtermMarks(), 0);
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(30), 0) << w->Log();

  // Exporting a command trial gives back the folder its program saved, unpacked into --out.
  std::string output;
  const std::vector<std::string> exporter = {
      BinDir() + "/sift", "export", "--checkpoints", dir_ + "/checkpoints",
      "--trial",          "0",      "--out"};
  auto with_out = [&](const std::string& out) {
    auto argv = exporter;
    argv.push_back(out);
    return argv;
  };
  ASSERT_EQ(RunCommand(with_out(dir_ + "/exported"), &output), 0) << output;
  EXPECT_EQ(Read(dir_ + "/exported/epoch.txt"), "3");
  EXPECT_NE(output.find("unpacked " + dir_ + "/exported: the checkpoint folder (1 files)"),
            std::string::npos)
      << output;
  // Never over a user's files.
  fs::create_directories(dir_ + "/taken");
  WriteFile(dir_ + "/taken/mine.txt", "keep");
  EXPECT_EQ(RunCommand(with_out(dir_ + "/taken"), &output), 1) << output;
  EXPECT_NE(output.find("must be a new or empty directory"), std::string::npos) << output;
  EXPECT_EQ(Read(dir_ + "/taken/mine.txt"), "keep");
}

TEST_F(CommandTrials, AStopFromTheSchedulerSendsSigterm) {
  // A flat curve: the plateau scheduler stops the trial after its second epoch.
  Start("cmd-stop", std::string(kSpace) + kObjective +
                        "trainer: {mode: flat, marks: marks, epoch_seconds: 0.3}\n"
                        "scheduler: {type: plateau, patience: 1}\n"
                        "budget: {max_trials: 1, max_epochs: 20}\n");
  auto w = Worker("w");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << w->Log();
  EXPECT_EQ(Query("SELECT state FROM trials"), "STOPPED") << w->Log();
  EXPECT_LT(std::stoi(Query("SELECT COUNT(*) FROM reports")), 20);
  EXPECT_EQ(SigtermMarks(), 1) << w->Log();
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(30), 0) << w->Log();
}

TEST_F(CommandTrials, APausedTrialResumesOnAnotherWorkerFromItsFolder) {
  Start("cmd-pause", std::string(kSpace) + kObjective +
                         "trainer: {mode: finish, marks: marks, epoch_seconds: 0.5}\n"
                         "budget: {max_trials: 1, max_epochs: 4}\n");
  auto first = Worker("first");
  ASSERT_GE(WaitFor("SELECT COUNT(*) FROM reports", 1), 1) << first->Log();
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "pause", "--coordinator", address_}, &output), 0)
      << output;
  // It hands back at its next report: SIGTERM to the program, checkpoint kept.
  ASSERT_EQ(WaitFor("SELECT COUNT(*) FROM segments WHERE end_reason != ''", 1), 1) << first->Log();
  EXPECT_EQ(SigtermMarks(), 1) << first->Log();
  first->Signal(SIGTERM);
  EXPECT_EQ(first->Wait(30), 0) << first->Log();
  const int64_t reported = std::stoll(Query("SELECT MAX(epoch) FROM reports"));
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "resume", "--coordinator", address_}, &output), 0)
      << output;
  auto second = Worker("second");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << second->Log();
  EXPECT_EQ(Query("SELECT state FROM trials"), "COMPLETED");
  const std::string err = Read(dir_ + "/logs-second/study-1-trial-0.stderr.log");
  EXPECT_NE(err.find("resumed at epoch " + std::to_string(reported)), std::string::npos)
      << err << second->Log();
  EXPECT_EQ(Query("SELECT COUNT(DISTINCT epoch) || '/' || COUNT(*) FROM reports"), "4/4");
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(30), 0);
}

TEST_F(CommandTrials, APreemptedTrialResumesOnAnotherWorkerFromItsFolder) {
  Start("cmd-preempt", std::string(kSpace) + kObjective +
                           "trainer: {mode: finish, marks: marks, epoch_seconds: 0.5}\n"
                           "budget: {max_trials: 1, max_epochs: 4}\n");
  auto first = Worker("first");
  ASSERT_GE(WaitFor("SELECT COUNT(*) FROM reports", 1), 1) << first->Log();
  first->Signal(SIGTERM);  // the VM's notice: forwarded to the program, which saves and leaves
  EXPECT_EQ(first->Wait(30), 0) << first->Log();
  EXPECT_EQ(SigtermMarks(), 1) << first->Log();
  const std::string checkpoint =
      Query("SELECT checkpoint FROM segments WHERE end_reason='preempted'");
  EXPECT_TRUE(std::regex_match(checkpoint, std::regex("trial-0-e[1-3](-s1)?\\.ckpt")))
      << checkpoint << first->Log();
  EXPECT_EQ(Query("SELECT state FROM trials"), "PENDING");
  const int64_t reported = std::stoll(Query("SELECT MAX(epoch) FROM reports"));

  auto second = Worker("second");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << second->Log();
  EXPECT_NE(second->Log().find("restored from " + checkpoint), std::string::npos) << second->Log();
  const std::string err = Read(dir_ + "/logs-second/study-1-trial-0.stderr.log");
  EXPECT_NE(err.find("resumed at epoch " + std::to_string(reported)), std::string::npos) << err;
  EXPECT_EQ(Query("SELECT COUNT(DISTINCT epoch) || '/' || COUNT(*) FROM reports"), "4/4");
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(30), 0);
}

TEST_F(CommandTrials, ACrashFailsTheTrialWithItsStderr) {
  Start("cmd-crash", std::string(kSpace) + kObjective +
                         "trainer: {mode: crash, marks: marks}\n"
                         "budget: {max_trials: 1, max_epochs: 4}\n");
  auto w = Worker("w");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_FAILED) << w->Log();  // its only trial failed
  EXPECT_EQ(Query("SELECT state FROM trials"), "FAILED") << w->Log();
  const std::string crash = Query("SELECT end_reason FROM trials");
  EXPECT_NE(crash.find("the program exited with status 3; its stderr ended with:\n"
                       "Traceback (most recent call last):\nValueError: boom at epoch 2"),
            std::string::npos)
      << crash;
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(30), 0) << w->Log();
}

// A program that passes the submit's checks but cannot be executed on the worker (here a script
// whose interpreter is missing) fails its trial with the reason, not with an exit status 127.
TEST_F(CommandTrials, AProgramThatCannotStartFailsNamingIt) {
  const std::string script =
      WriteFile(TempDir("cmd-cannot-start") + "/run.sh", "#!/no/such/interpreter\n");
  fs::permissions(script, fs::perms::owner_all);
  Start("cmd-cannot-start", std::string(kSpace) + kObjective + "budget: {max_trials: 1}\n",
        /*report_timeout=*/120, "[./run.sh]");
  auto w = Worker("w");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_FAILED) << w->Log();
  const std::string reason = Query("SELECT end_reason FROM trials");
  EXPECT_NE(reason.find("cannot run ./run.sh: No such file or directory"), std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("127"), std::string::npos) << reason;
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(30), 0) << w->Log();
}

TEST_F(CommandTrials, AHangIsKilledAfterTheReportTimeout) {
  // It stops reporting in epoch 2 (and ignores SIGTERM): report_timeout 3 s.
  Start("cmd-hang",
        std::string(kSpace) + kObjective +
            "trainer: {mode: hang, marks: marks}\n"
            "budget: {max_trials: 1, max_epochs: 4}\n",
        /*report_timeout=*/3);
  auto w = Worker("w");
  v1::Study study = WaitForStudyEnd(address_, 60);
  ASSERT_EQ(study.state(), v1::STUDY_FAILED) << w->Log();  // its only trial failed
  EXPECT_EQ(Query("SELECT state FROM trials"), "FAILED") << w->Log();
  const std::string hang = Query("SELECT end_reason FROM trials");
  EXPECT_NE(hang.find("no report for 3 s (trial.report_timeout); the program was killed"),
            std::string::npos)
      << hang;
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(30), 0) << w->Log();
}

// examples/xgboost/train.py (Debian's python3-xgboost), its worker stopped as by a spot notice
// after the first report: the next lease restores the booster and keeps counting its rounds, and
// the trial ends exactly where an uninterrupted run with its seed does.
TEST_F(CommandTrials, XGBoostResumesItsBoosterAfterAPreemption) {
  if (std::system("/usr/bin/python3 -c 'import xgboost' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import xgboost (scripts/install-deps.sh installs "
                    "Debian's python3-xgboost)";
  }
  // A few thousand rows, so that 12 epochs of 10 rounds outlast the notice.
  std::string csv = "a,b,c,d,y\n";
  for (int i = 0; i < 3000; ++i) {
    const double a = std::sin(i * 0.37), b = std::cos(i * 1.3), c = std::sin(i * 2.1),
                 d = std::cos(i * 0.61);
    csv += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "," +
           std::to_string(d) + "," + std::to_string(3 * a + 2 * std::sin(3 * b) + c * d) + "\n";
  }
  const std::string train = SourceDir() + "/examples/xgboost/train.py";
  const std::string data = WriteFile(TempDir("xgboost-data") + "/d.csv", csv);
  Start("cmd-xgboost",
        "objective: {metric: val_rmse, direction: minimize}\n"
        "search_space:\n  eta: {type: float, low: 0.05, high: 0.3, scale: log}\n"
        "  max_depth: {type: int, low: 3, high: 5}\n"
        "  subsample: {type: float, low: 0.6, high: 1.0}\n"
        "trainer: {rounds_per_epoch: 10}\nbudget: {max_trials: 2, max_epochs: 12}\n",
        120, "[/usr/bin/python3, " + train + ", --data, " + data + ", --label, y]");
  auto first = Worker("first");
  ASSERT_GE(WaitFor("SELECT COUNT(*) FROM reports", 1), 1) << first->Log();
  first->Signal(SIGTERM);  // the notice: train.py finishes its epoch, saves it and leaves
  ASSERT_EQ(first->Wait(30), 0) << first->Log();
  const std::string checkpoint =
      Query("SELECT checkpoint FROM segments WHERE end_reason='preempted'");
  ASSERT_TRUE(std::regex_match(checkpoint, std::regex("trial-0-e[0-9]+(-s1)?\\.ckpt")))
      << checkpoint << first->Log();
  const int reported = std::stoi(Query("SELECT MAX(epoch) FROM reports"));
  ASSERT_LT(reported, 12) << "the trial ended before the notice";

  auto second = Worker("second");
  v1::Study study = WaitForStudyEnd(address_, 120);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << second->Log();
  EXPECT_NE(second->Log().find("restored from " + checkpoint), std::string::npos) << second->Log();
  EXPECT_EQ(second->Log().find("redid epoch"), std::string::npos) << second->Log();
  // The booster came back with at least the reported epochs' rounds (one more epoch when the
  // notice came mid-epoch: train.py saves it and reports it first when resumed).
  const std::string err = Read(dir_ + "/logs-second/study-1-trial-0.stderr.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("restored a booster of ([0-9]+) rounds")))
      << err;
  EXPECT_GE(std::stoi(m[1]), 10 * reported) << err;
  // Every epoch of both trials reported once, with 10 more trees each.
  EXPECT_EQ(Query("SELECT COUNT(DISTINCT number || '-' || epoch) || '/' || COUNT(*) || '/' || "
                  "SUM(json_extract(metrics, '$.trees') = 10 * epoch) FROM reports"),
            "24/24/24");
  // Both finished, and each was charged for its leases.
  EXPECT_EQ(Query("SELECT COUNT(*) FROM trials WHERE state = 'COMPLETED' AND (SELECT "
                  "SUM((s.end - s.start) * s.price_per_hour) FROM segments s WHERE "
                  "s.number = trials.number) > 0"),
            "2");

  // Trial 0 again, uninterrupted, with its seed (train.py prints it) and parameters.
  const std::string out = Read(dir_ + "/logs-first/study-1-trial-0.stdout.log");
  ASSERT_TRUE(std::regex_search(out, m, std::regex("seed ([0-9]+)"))) << out;
  nlohmann::json params =
      nlohmann::json::parse(Query("SELECT params FROM trials WHERE number = 0"));
  params["rounds_per_epoch"] = 10;
  std::string straight;
  ASSERT_EQ(RunCommand({"/usr/bin/env", "SIFT_PARAMS=" + params.dump(), "SIFT_SEED=" + m[1].str(),
                        "SIFT_MAX_EPOCHS=12", "SIFT_CHECKPOINT_DIR=" + dir_ + "/straight",
                        "/usr/bin/python3", train, "--data", data, "--label", "y"},
                       &straight),
            0)
      << straight;
  const size_t last = straight.rfind("{\"sift\": {\"epoch\": 12,");
  ASSERT_NE(last, std::string::npos) << straight;
  const nlohmann::json final_report =
      nlohmann::json::parse(straight.substr(last, straight.find('\n', last) - last));
  const nlohmann::json resumed =
      nlohmann::json::parse(Query("SELECT metrics FROM reports WHERE number = 0 AND epoch = 12"));
  EXPECT_EQ(final_report["sift"]["val_rmse"].get<double>(), resumed["val_rmse"].get<double>())
      << straight;
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(30), 0);
}

}  // namespace command_trial_test
}  // namespace sift::testing

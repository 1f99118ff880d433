// `sift run` interrupted the ways a terminal interrupts it (Ctrl-C, a hang-up, Ctrl-C twice),
// then run again on the same directory: one study, paused and resumed, nothing recorded retrained.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/long_study.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace interrupt_test {

const std::string kConfig = LongStudyConfig("interrupted");

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

int64_t Count(const std::string& db, const std::string& sql) {
  try {
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getInt64();
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

// Waits until `sql` counts at least `n` rows in the run's database.
bool WaitForCount(const std::string& db, const std::string& sql, int64_t n, Process& p) {
  for (int i = 0; i < 3000 && p.Running(); ++i) {
    if (Count(db, sql) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string Text(SQLite::Database& db, const std::string& sql) {
  return db.execAndGet(sql).getString();
}

// The worker logs of a run directory, together.
std::string WorkerLogs(const std::string& out) {
  std::stringstream all;
  for (const auto& e : std::filesystem::directory_iterator(out + "/workers")) {
    all << std::ifstream(e.path()).rdbuf();
  }
  return all.str();
}

// The processes whose parent is `parent` (from /proc/PID/stat).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing paren.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

// Starts `argv` as a foreground job, waits for its first report and sends `sig` to the job.
int InterruptAfterFirstReport(const std::vector<std::string>& argv, const std::string& out, int sig,
                              std::string* log) {
  Process p(argv, out + ".log", /*own_group=*/true);
  EXPECT_TRUE(WaitForCount(out + "/sift.db", "SELECT COUNT(*) FROM reports", 1, p)) << p.Log();
  p.SignalGroup(sig);
  const int code = p.Wait(120);
  *log = p.Log();
  return code;
}

// What a pause must leave: one paused study, no lease open, none of it billed as spot trouble.
void ExpectPausedCleanly(const std::string& db_path, const std::string& signal_name) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM studies").getInt(), 1);
  EXPECT_EQ(Text(db, "SELECT state FROM studies"), "PAUSED");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end IS NULL").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end_reason IN "
                          "('preempted', 'expired')")
                .getInt(),
            0);
  EXPECT_EQ(Text(db, "SELECT detail FROM study_events WHERE action = 'paused'"), signal_name);
}

TEST(Interrupt, CtrlCPausesAndTheSameCommandResumesWithoutRetrainingOrASecondStudy) {
  const std::string dir = TempDir("ctrl-c");
  const std::string config = Write(dir + "/study.yaml", kConfig);
  const std::string out = dir + "/run";
  const std::vector<std::string> run = {BinDir() + "/sift", "run", config, "--out", out,
                                        "--workers",        "2"};
  std::string log;
  ASSERT_EQ(InterruptAfterFirstReport(run, out, SIGINT, &log), 130) << log;
  EXPECT_NE(log.find("study 1 paused; resume it with: sift run --resume " + out), std::string::npos)
      << log;
  EXPECT_NE(log.find("spot: 0 preemptions, 0 lost leases"), std::string::npos) << log;
  ExpectPausedCleanly(out + "/sift.db", "SIGINT");
  // The workers checkpointed and handed their trials back: mid-epoch (trial-N-eE-sS.ckpt), or
  // at the epoch's end when the signal lands in its last steps (the epoch is then reported and
  // the answer is PAUSE), so either name.
  EXPECT_GT(Count(out + "/sift.db",
                  "SELECT COUNT(*) FROM segments WHERE end_reason = "
                  "'study paused' AND checkpoint LIKE 'trial-%.ckpt'"),
            0)
      << log;
  std::map<int, int> recorded;  // trial -> epochs recorded before the pause
  {
    SQLite::Database db(out + "/sift.db", SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT number, MAX(epoch) FROM reports GROUP BY number");
    while (q.executeStep()) recorded[q.getColumn(0).getInt()] = q.getColumn(1).getInt();
  }
  ASSERT_FALSE(recorded.empty());

  // A changed config is refused, naming the difference; nothing starts.
  std::string changed = kConfig;
  changed.replace(changed.find("max_trials: 4"), 13, "max_trials: 5");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "run", Write(dir + "/changed.yaml", changed), "--out",
                        out, "--workers", "2"},
                       &output),
            2)
      << output;
  EXPECT_NE(output.find("budget.max_trials: 4 in the study, 5 in " + dir + "/changed.yaml"),
            std::string::npos)
      << output;

  // The same command resumes study 1 and finishes it.
  ASSERT_EQ(RunCommand(run, &output, 300), 0) << output;
  EXPECT_NE(output.find("resuming study 1 'interrupted'"), std::string::npos) << output;
  SQLite::Database db(out + "/sift.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM studies").getInt(), 1);
  EXPECT_EQ(Text(db, "SELECT state FROM studies"), "COMPLETED");
  // Every epoch is reported once, and each interrupted trial went on after its recorded epochs.
  SQLite::Statement q(db,
                      "SELECT number, COUNT(*), COUNT(DISTINCT epoch) FROM reports "
                      "GROUP BY number");
  while (q.executeStep()) {
    EXPECT_EQ(q.getColumn(1).getInt(), q.getColumn(2).getInt()) << "trial " << q.getColumn(0);
  }
  const double paused_at =
      db.execAndGet("SELECT at FROM study_events WHERE action = 'paused'").getDouble();
  for (const auto& [number, epochs] : recorded) {
    if (epochs == 4) continue;  // finished before the pause
    SQLite::Statement seg(db,
                          "SELECT MIN(start_epoch) FROM segments WHERE number = ? AND "
                          "start > ?");
    seg.bind(1, number);
    seg.bind(2, paused_at);
    ASSERT_TRUE(seg.executeStep());
    EXPECT_EQ(seg.getColumn(0).getInt(), epochs) << "trial " << number;
  }
  EXPECT_EQ(WorkerLogs(out).find("retrained epoch"), std::string::npos);
}

TEST(Interrupt, AHangUpPausesTooAndResumeFinishesTheOneStudyAfterWhichNewIsNeeded) {
  const std::string dir = TempDir("sighup");
  const std::string config = Write(dir + "/study.yaml", kConfig);
  const std::string out = dir + "/run";
  const std::vector<std::string> run = {BinDir() + "/sift", "run", config, "--out", out,
                                        "--workers",        "2"};
  std::string log, output;
  ASSERT_EQ(InterruptAfterFirstReport(run, out, SIGHUP, &log), 130) << log;
  ExpectPausedCleanly(out + "/sift.db", "SIGHUP");

  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", "--resume", out}, &output, 300), 0) << output;
  EXPECT_EQ(Count(out + "/sift.db", "SELECT COUNT(*) FROM studies"), 1);
  EXPECT_EQ(Count(out + "/sift.db", "SELECT COUNT(*) FROM studies WHERE state = 'COMPLETED'"), 1);

  // An ended study is not run again by accident; --new starts another, on purpose.
  EXPECT_EQ(RunCommand(run, &output), 2) << output;
  EXPECT_NE(output.find("which has ended (COMPLETED"), std::string::npos) << output;
  std::string tiny = kConfig;
  tiny.replace(tiny.find("max_trials: 4, max_epochs: 4"), 28, "max_trials: 1, max_epochs: 1");
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", Write(dir + "/tiny.yaml", tiny), "--out", out,
                        "--new", "--workers", "1"},
                       &output, 300),
            0)
      << output;
  EXPECT_EQ(Count(out + "/sift.db", "SELECT COUNT(*) FROM studies WHERE state = 'COMPLETED'"), 2);

  EXPECT_EQ(RunCommand({BinDir() + "/sift", "run", "--resume", dir + "/nothing"}, &output), 2);
  EXPECT_NE(output.find(dir + "/nothing: no study to resume here"), std::string::npos) << output;
}

TEST(Interrupt, ASecondCtrlCStopsStuckWorkersAtOnceAndStillLeavesAResumableStudy) {
  const std::string dir = TempDir("ctrl-c-twice");
  const std::string out = dir + "/run";
  Process p({BinDir() + "/sift", "run", Write(dir + "/study.yaml", kConfig), "--out", out,
             "--workers", "2"},
            out + ".log", /*own_group=*/true);
  ASSERT_TRUE(WaitForCount(out + "/sift.db", "SELECT COUNT(*) FROM reports", 1, p)) << p.Log();
  // Workers that cannot hand back (stuck in a long step): only a second Ctrl-C ends the run.
  const std::vector<pid_t> workers = ChildrenOf(p.pid());
  ASSERT_EQ(workers.size(), 2u);
  for (pid_t w : workers) kill(w, SIGSTOP);
  p.SignalGroup(SIGINT);
  for (int i = 0; i < 1000 && p.Log().find("pausing study") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  p.SignalGroup(SIGINT);
  const int code = p.Wait(60);
  for (pid_t w : workers) kill(w, SIGKILL);  // in case the run did not
  ASSERT_EQ(code, 130) << p.Log();
  EXPECT_NE(p.Log().find("SIGINT again: stopping the workers at once"), std::string::npos)
      << p.Log();
  ExpectPausedCleanly(out + "/sift.db", "SIGINT");
  // Their trials were handed back for them, to resume from their last epoch's checkpoint.
  EXPECT_GT(Count(out + "/sift.db",
                  "SELECT COUNT(*) FROM segments WHERE end_reason = "
                  "'study paused' AND checkpoint = ''"),
            0);
}

}  // namespace interrupt_test
}  // namespace sift::testing

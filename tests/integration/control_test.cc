// Controlling a running `sift run` from another terminal: status, pause, budget, resume and
// cancel find its coordinator through the run directory, and each lands in the audit trail.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/integration/long_study.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace control_test {

const std::string kConfig = LongStudyConfig("controlled");

struct Result {
  int code;
  std::string output;
};

Result Sift(std::vector<std::string> args) {
  args.insert(args.begin(), BinDir() + "/sift");
  Result r;
  r.code = RunCommand(args, &r.output, 60);
  return r;
}

bool Contains(const Result& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

TEST(Control, StatusPauseBudgetResumeAndCancelReachASiftRunThroughItsDirectory) {
  setenv("USER", "it-operator", 1);  // who the audit trail names, for every process below
  const std::string dir = TempDir("control");
  const std::string out = dir + "/run";
  std::ofstream(dir + "/study.yaml") << kConfig;
  Process run({BinDir() + "/sift", "run", dir + "/study.yaml", "--out", out, "--workers", "1"},
              dir + "/run.log");
  for (int i = 0; i < 1200 && !std::filesystem::exists(out + "/coordinator.addr"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(std::filesystem::exists(out + "/coordinator.addr")) << run.Log();
  struct stat token {};
  ASSERT_EQ(stat((out + "/coordinator.token").c_str(), &token), 0);
  EXPECT_EQ(token.st_mode & 0777, 0600u);

  Result r = Sift({"status", "--run", out});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "study 1 'controlled': RUNNING")) << r.output;
  // Without the run's token the coordinator refuses.
  std::ofstream(dir + "/wrong.token") << "not-the-token-of-this-run\n";
  chmod((dir + "/wrong.token").c_str(), 0600);
  r = Sift({"pause", "--run", out, "--token-file", dir + "/wrong.token"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(Contains(r, "invalid token")) << r.output;

  r = Sift({"pause", "--run", out});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "study 1 'controlled': PAUSED (paused by it-operator)")) << r.output;
  r = Sift({"budget", "--run", out, "--max-trials", "0"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(Contains(r, "max_trials: must be >= 1, got 0")) << r.output;
  r = Sift({"budget", "--run", out, "--max-dollars", "-1"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(Contains(r, "max_dollars: must be a number > 0, got -1")) << r.output;
  r = Sift({"budget", "--run", out, "--max-dollars", "5", "--max-hours", "2"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "budget now: max_dollars $5.0000, max_hours 2.00, max_trials 4"))
      << r.output;
  r = Sift({"status", "--run", out});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "PAUSED")) << r.output;
  EXPECT_TRUE(Contains(r, "it-operator  paused")) << r.output;
  EXPECT_TRUE(Contains(r, R"(it-operator  budget {"max_dollars":5.0,"max_hours":2.0})"))
      << r.output;

  r = Sift({"resume", "--run", out});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "study 1 'controlled': RUNNING")) << r.output;
  r = Sift({"cancel", "--run", out});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "CANCELLED")) << r.output;
  EXPECT_EQ(run.Wait(120), 1) << run.Log();  // the study produced no complete result

  // The run has ended: nothing to reach, and the directory says so.
  EXPECT_FALSE(std::filesystem::exists(out + "/coordinator.token"));
  r = Sift({"pause", "--run", out});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(Contains(r, out + ": no coordinator.addr here")) << r.output;

  SQLite::Database db(out + "/sift.db", SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT user, action FROM study_events WHERE study_id = 1 ORDER BY id");
  std::vector<std::string> events;
  while (q.executeStep()) {
    events.push_back(q.getColumn(0).getString() + " " + q.getColumn(1).getString());
  }
  EXPECT_EQ(events, std::vector<std::string>({"it-operator created", "it-operator paused",
                                              "it-operator budget", "it-operator resumed",
                                              "it-operator cancelled"}));
}

}  // namespace control_test
}  // namespace sift::testing

// WorkerClient's loop (worker/worker_client.cc) against a real coordinator served in this
// process: it registers again with a coordinator that forgot it and works for it, and its
// grace-period watchdog ends with the loop.
#include "worker/worker_client.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <future>

#include "tests/worker/coordinator_fixture.h"

namespace sift::worker {
namespace worker_client_test {

namespace fs = std::filesystem;
using fixture::Eventually;
using std::chrono::milliseconds;
using WorkerClientTest = fixture::CoordinatorFixture;

int64_t CountWorkers(const fs::path& db) {
  SQLite::Database d(db.string(), SQLite::OPEN_READONLY);
  return d.execAndGet("SELECT COUNT(*) FROM workers").getInt64();
}

TEST_F(WorkerClientTest, TheWorkerRegistersAgainWithACoordinatorThatForgotIt) {
  StartCoordinator("first.db");
  options_.grace_seconds = 5;  // the loop answers a stop well within it
  WorkerClient client(options_);
  auto run = std::async(std::launch::async, [&] { return client.Run(); });
  ASSERT_TRUE(Eventually([&] { return CountWorkers(dir_ / "first.db") == 1; }));

  // Another coordinator with a database of its own comes up on the same address: the worker's
  // calls are retried through the gap, answered NOT_FOUND, and it registers with the new one.
  StopCoordinator();
  std::this_thread::sleep_for(milliseconds(300));
  StartCoordinator("second.db");
  const int64_t study = CreateStudy(
      "name: cmd\n"
      "objective: {metric: score, direction: maximize}\n"
      "search_space:\n"
      "  x: {type: float, low: 0, high: 1}\n"
      "trial:\n"
      "  command: [sh, -c, 'echo \"{\\\"sift\\\": {\\\"epoch\\\": 1, \\\"score\\\": 0.5}}\"', sh]\n"
      "budget: {max_trials: 1, max_epochs: 1}\n");
  ASSERT_TRUE(Eventually([&] { return CountWorkers(dir_ / "second.db") == 1; }, 20));
  // And works for it: the command trial ran to completion under the new registration.
  ASSERT_TRUE(Eventually(
      [&] {
        const auto trials = Trials(study);
        return trials.size() == 1 && trials[0].record.state == search::TrialState::kCompleted;
      },
      20));
  EXPECT_DOUBLE_EQ(*Trials(study)[0].objective, 0.5);

  client.RequestStop();
  ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(run.get(), 0);
}

// The grace-period watchdog ends with Run: a worker whose loop returned (stop requested, or idle
// exit) is not killed by it later, and it does not outlive the WorkerClient it watches.
TEST_F(WorkerClientTest, TheGraceWatchdogEndsWithTheLoop) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StartCoordinator();
        options_.grace_seconds = 1.5;  // the loop answers a stop well within it
        {
          WorkerClient client(options_);
          auto run = std::async(std::launch::async, [&] { return client.Run(); });
          Eventually([&] { return CountWorkers(dir_ / "sift.db") == 1; });
          client.RequestStop();
          if (run.get() != 0) _exit(3);
        }
        std::this_thread::sleep_for(milliseconds(2500));  // well past the grace period
        StopCoordinator();
        fs::remove_all(dir_);
        _exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace worker_client_test
}  // namespace sift::worker

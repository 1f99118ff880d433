// The PostgreSQL store with real processes: two `sift coordinator`s on one database (the study
// lease decides which serves the study; the other takes it over when the first is killed), and
// `sift migrate` from a `sift run`'s SQLite database, whose report must come out the same.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "coordinator/rpc/client.h"
#include "coordinator/store/store.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"
#include "tests/integration/two_coordinators.h"
#include "tests/pg_server.h"

namespace sift::testing {
namespace postgres_test {

constexpr const char* kConfig = R"(name: pg-takeover
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 64}
trainer: {model: mlp, depth: 1, batch_size: 128}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 4, max_epochs: 3}
seed: 5
data: {train_limit: 2048, val_size: 256, test_limit: 500}
checkpoint: {every_epochs: 1}
)";

// The takeover's study: kConfig made long enough that it cannot end between the test seeing
// its second report and killing the first coordinator (kConfig's 12 reports of 2,048 images
// did once, on a loaded machine: the second coordinator then had nothing to take over).
constexpr int kTakeoverTrials = 8, kTakeoverEpochs = 4;
std::string TakeoverConfig() {
  std::string config = kConfig;
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"max_trials: 4, max_epochs: 3", "max_trials: " + std::to_string(kTakeoverTrials) +
                                           ", max_epochs: " + std::to_string(kTakeoverEpochs)},
      {"train_limit: 2048", "train_limit: 8192"}};
  for (const auto& [from, to] : changes) {
    const size_t at = config.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) config.replace(at, from.size(), to);
  }
  return config;
}

// The report without the timestamped log lines (spdlog, on stderr) that come with it.
std::string WithoutLogLines(const std::string& output) {
  std::istringstream in(output);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[20", 0) != 0) out += line + "\n";
  }
  return out;
}

TEST(Postgres, TheSecondCoordinatorTakesTheStudyOverWhenTheFirstIsKilled) {
  std::string why;
  const std::string url = NewTestDatabase(&why);
  if (url.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("pg-takeover");
  // Both share the checkpoints, as coordinators on a shared filesystem would.
  const std::vector<std::string> flags = {
      "--study-lease", "2", "--lease-timeout", "4", "--checkpoint-dir", dir + "/checkpoints"};
  TwoCoordinators pair;
  ASSERT_TRUE(StartTwoCoordinators(url, dir, flags, TakeoverConfig(), &pair));
  auto& [first, second, first_address, second_address] = pair;
  // The workers know both coordinators and talk to the first that answers.
  const std::string both = "ipv4:" + first_address + "," + second_address;
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 2; ++i) {
    workers.push_back(std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", both, "--name",
                                 "w" + std::to_string(i), "--threads", "1", "--cache-dir",
                                 dir + "/cache"},
        dir + "/worker-" + std::to_string(i) + ".log"));
  }

  // Wait for checkpointed progress, while only the first serves the study.
  auto store = coordinator::OpenStore(url);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t reports = 0;
  while (std::chrono::steady_clock::now() < deadline && reports < 2) {
    reports = store->ListReports(1).size();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(reports, 2u) << first->Log() << workers[0]->Log();
  {
    auto stub = v1::Studies::NewStub(coordinator::MakeChannel(second_address));
    v1::GetStudyRequest req;
    req.set_study_id(1);
    v1::Study study;
    grpc::Status s = stub->GetStudy(coordinator::MakeContext("").get(), req, &study);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << "the second serves it too";
  }

  first->Signal(SIGKILL);
  EXPECT_EQ(first->Wait(10), 128 + SIGKILL);
  {
    const auto record = store->GetStudy(1);
    ASSERT_TRUE(record.has_value());
    ASSERT_EQ(record->state, coordinator::StudyState::kRunning)
        << "the study ended before the first coordinator was killed: nothing to take over";
  }

  const v1::Study study = WaitForStudyEnd(second_address, /*timeout_s=*/240);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED)
      << second->Log() << workers[0]->Log() << workers[1]->Log();
  EXPECT_NE(second->Log().find("[study 1] taking it over"), std::string::npos) << second->Log();
  for (auto& w : workers) w->Signal(SIGTERM);
  for (auto& w : workers) w->Wait(30);
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(30), 0) << second->Log();

  const auto trials = store->ListTrials(1);
  ASSERT_EQ(trials.size(), static_cast<size_t>(kTakeoverTrials));
  for (const auto& t : trials) {
    EXPECT_EQ(t.state, search::TrialState::kCompleted) << "trial " << t.number;
  }
  for (const auto& seg : store->ListSegments(1)) {
    EXPECT_TRUE(seg.end.has_value()) << seg.lease_id << " never closed";
  }
  // Every trial has each epoch reported, its curve whole across the takeover.
  std::set<std::pair<int64_t, int64_t>> epochs;
  for (const auto& r : store->ListReports(1)) epochs.insert({r.number, r.epoch});
  EXPECT_EQ(epochs.size(), static_cast<size_t>(kTakeoverTrials * kTakeoverEpochs));
}

// `sift run` on SQLite, then `sift migrate` to PostgreSQL: `sift report` prints the same from
// both, and a second migrate of the same study is refused without copying anything.
TEST(Postgres, MigrateFromSqliteRoundTripsTheReport) {
  std::string why;
  const std::string url = NewTestDatabase(&why);
  if (url.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("pg-migrate");
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", WriteFile(dir + "/study.yaml", kConfig), "--out",
                        dir + "/run", "--workers", "2", "--threads-per-worker", "1"},
                       &output, 300),
            0)
      << output;
  const std::string sqlite = dir + "/run/sift.db";
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "migrate", "--from", sqlite, "--to", url}, &output), 0)
      << output;
  EXPECT_NE(output.find("copied 1 study"), std::string::npos) << output;

  // The report names the checkpoint folder it finds beside a SQLite file; a copy of the file
  // elsewhere has none, as a PostgreSQL database has none.
  const std::string copy = dir + "/copy.db";
  std::filesystem::copy_file(sqlite, copy);
  if (std::filesystem::exists(sqlite + "-wal"))
    std::filesystem::copy_file(sqlite + "-wal", copy + "-wal");
  std::string from_sqlite, from_postgres;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "report", "--db", copy}, &from_sqlite), 0)
      << from_sqlite;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "report", "--db", url}, &from_postgres), 0)
      << from_postgres;
  EXPECT_NE(from_sqlite.find("pg-takeover"), std::string::npos) << from_sqlite;
  EXPECT_EQ(WithoutLogLines(from_postgres), WithoutLogLines(from_sqlite));

  auto from = coordinator::OpenStoreReadOnly(sqlite);
  auto to = coordinator::OpenStore(url);
  EXPECT_EQ(to->ListSegments(1).size(), from->ListSegments(1).size());
  EXPECT_EQ(to->ListStudyEvents(1).size(), from->ListStudyEvents(1).size());
  EXPECT_EQ(to->ListIdleSegments(1).size(), from->ListIdleSegments(1).size());
  EXPECT_EQ(to->ListWorkers().size(), from->ListWorkers().size());

  EXPECT_EQ(RunCommand({BinDir() + "/sift", "migrate", "--from", sqlite, "--to", url}, &output), 1);
  EXPECT_NE(output.find("study 1 ('pg-takeover') is already in the destination"), std::string::npos)
      << output;
  EXPECT_EQ(to->ListReports(1).size(), from->ListReports(1).size());
}

}  // namespace postgres_test
}  // namespace sift::testing

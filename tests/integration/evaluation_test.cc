// The test split scored once, through real processes: a standalone coordinator, real
// sift-worker processes and `sift evaluate`. When the study completes only its best trial gets a
// test score; another trial gets one on request; a worker lost while scoring (it took the lease
// and went silent, as a killed VM does) has its evaluation requeued to another worker.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "coordinator/rpc/client.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace evaluation_test {

constexpr const char* kConfig = R"(name: it-evaluate
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
trainer: {model: mlp, hidden: 32, depth: 1, batch_size: 128}
searcher: {type: sobol}
scheduler: {type: fifo}
budget: {max_trials: 3, max_epochs: 1}
seed: 7
data: {train_limit: 512, val_size: 256, test_limit: 300}
)";

// The study's trials, polled until `done(trials)` or the timeout.
template <typename Pred>
v1::ListTrialsResponse WaitForTrials(v1::Studies::Stub& stub, double timeout_s, Pred done) {
  v1::ListTrialsResponse trials;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    v1::ListTrialsRequest req;
    req.set_study_id(1);
    trials.Clear();
    if (stub.ListTrials(coordinator::MakeContext("").get(), req, &trials).ok() && done(trials)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return trials;
}

std::string Evaluation(const v1::ListTrialsResponse& trials, int64_t number) {
  for (const auto& t : trials.trials()) {
    if (t.number() == number) return t.test_evaluation();
  }
  return "no such trial";
}

// A worker that leaves after `idle_exit_s` without work.
std::unique_ptr<Process> StartWorker(const std::string& address, const std::string& dir,
                                     const std::string& name, int idle_exit_s) {
  return std::make_unique<Process>(
      std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", address, "--name", name,
                               "--threads", "1", "--cache-dir", dir + "/cache", "--exit-when-idle",
                               "--idle-exit-seconds", std::to_string(idle_exit_s)},
      dir + "/" + name + ".log");
}

TEST(Evaluation, BestTrialScoredOnceAndALostEvaluationIsRequeued) {
  const std::string dir = TempDir("evaluate");
  std::unique_ptr<Process> coordinator;
  const int port = StartSiftCoordinator(
      &coordinator, dir + "/sift.db",
      {"--checkpoint-dir", dir + "/checkpoints", "--lease-timeout", "2"}, dir + "/coordinator.log");
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", kConfig),
                        "--coordinator", address},
                       &output),
            0)
      << output;
  auto first = StartWorker(address, dir, "first", 2);
  v1::Study study = WaitForStudyEnd(address, /*timeout_s=*/180);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << coordinator->Log() << first->Log();
  ASSERT_TRUE(study.has_best());
  const int64_t best = study.best_trial_number();

  auto stub = v1::Studies::NewStub(coordinator::MakeChannel(address));
  auto trials =
      WaitForTrials(*stub, 60, [&](const auto& t) { return Evaluation(t, best) == "done"; });
  ASSERT_EQ(trials.trials_size(), 3);
  for (const auto& t : trials.trials()) {
    EXPECT_EQ(t.final_metrics().count("test_accuracy"), 0u) << "trial " << t.number();
    if (t.number() != best) {
      EXPECT_EQ(t.test_evaluation(), "") << "trial " << t.number() << " was scored on test";
      continue;
    }
    ASSERT_EQ(t.test_evaluation(), "done") << coordinator->Log() << first->Log();
    const double accuracy = t.test_metrics().at("test_accuracy");
    EXPECT_GT(accuracy, 0.2);
    double correct = 0, total = 0;
    for (int k = 0; k < 10; ++k) {
      correct += t.test_metrics().at("test_class_" + std::to_string(k) + "_correct");
      total += t.test_metrics().at("test_class_" + std::to_string(k) + "_total");
    }
    EXPECT_EQ(total, 300);
    EXPECT_DOUBLE_EQ(correct / total, accuracy);
  }
  EXPECT_EQ(first->Wait(30), 0) << first->Log();  // idle: it leaves

  // Another trial, on request; a "worker" takes its lease and is gone (no heartbeat, no answer).
  const int64_t other = best == 0 ? 1 : 0;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "evaluate", "--coordinator", address, "--study", "1",
                        "--trial", std::to_string(other), "--no-wait"},
                       &output),
            0)
      << output;
  EXPECT_NE(output.find("test evaluation pending"), std::string::npos) << output;
  auto workers = v1::Workers::NewStub(coordinator::MakeChannel(address));
  v1::RegisterWorkerRequest reg;
  reg.set_name("doomed");
  reg.set_instance_type("c6i.large");
  reg.set_market(v1::MARKET_SPOT);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(workers->RegisterWorker(coordinator::MakeContext("").get(), reg, &registered).ok());
  v1::AcquireTrialRequest acquire;
  acquire.set_worker_id(registered.worker_id());
  v1::AcquireTrialResponse lease;
  ASSERT_TRUE(workers->AcquireTrial(coordinator::MakeContext("").get(), acquire, &lease).ok());
  ASSERT_EQ(lease.status(), v1::AcquireTrialResponse::ASSIGNED);
  EXPECT_TRUE(lease.assignment().evaluate_test());
  EXPECT_EQ(lease.assignment().trial_number(), other);
  EXPECT_FALSE(lease.assignment().resume_checkpoint().empty());

  // It waits out the lost lease (2 s to expire) before it finds the evaluation requeued.
  auto second = StartWorker(address, dir, "second", 15);
  trials = WaitForTrials(*stub, 60, [&](const auto& t) { return Evaluation(t, other) == "done"; });
  EXPECT_EQ(Evaluation(trials, other), "done") << coordinator->Log() << second->Log();
  EXPECT_NE(coordinator->Log().find("test evaluation lease " + lease.assignment().lease_id()),
            std::string::npos)
      << coordinator->Log();
  // The lost worker's late answer is refused: the score stands as the second worker gave it.
  v1::CompleteTrialRequest late;
  late.set_worker_id(registered.worker_id());
  late.set_lease_id(lease.assignment().lease_id());
  (*late.mutable_final_metrics())["test_accuracy"] = 0.01;
  v1::CompleteTrialResponse ignored;
  EXPECT_EQ(workers->CompleteTrial(coordinator::MakeContext("").get(), late, &ignored).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(second->Wait(40), 0) << second->Log();
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(30), 0);

  SQLite::Database db(dir + "/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM evaluations").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM evaluations WHERE state = 'done' AND "
                          "json_extract(metrics, '$.test_accuracy') > 0.2")
                .getInt(),
            2);
  EXPECT_EQ(
      db.execAndGet("SELECT requested_by FROM evaluations WHERE number = " + std::to_string(best))
          .getString(),
      "best trial");
}

}  // namespace evaluation_test
}  // namespace sift::testing

// A coordinator served in the test's process on 127.0.0.1 (SQLite in a temp dir), on a port
// that stays the same across restarts, for the worker's client-side tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/checkpoint_file.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/server.h"
#include "tests/free_port.h"
#include "worker/coordinator_link.h"
#include "worker/worker_client.h"

namespace sift::worker::fixture {

namespace fs = std::filesystem;
using coordinator::Coordinator;
using coordinator::CoordinatorOptions;
using coordinator::Server;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

inline const char* kStudy =
    "name: link\n"
    "objective: {metric: val_accuracy, direction: maximize}\n"
    "search_space:\n"
    "  lr: {type: float, low: 0.001, high: 0.1, scale: log}\n"
    "budget: {max_trials: 2, max_epochs: 2}\n";

// Waits up to `seconds` for `done()`.
template <typename Fn>
inline bool Eventually(Fn done, double seconds = 10) {
  const auto until = Clock::now() + milliseconds(static_cast<int64_t>(seconds * 1000));
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CoordinatorFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sift-worker-client-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    port_ = sift::testing::FreePort();
    options_.client.address = "127.0.0.1:" + std::to_string(port_);
    options_.name = "test-worker";
    options_.price_per_hour = 1.2;
    options_.retry_seconds = 20;
    options_.trial_log_dir = (dir_ / "trial-logs").string();
  }
  void TearDown() override {
    StopCoordinator();
    fs::remove_all(dir_);
  }

  // A coordinator over database `db` in the test's folder, on the test's port.
  void StartCoordinator(const std::string& db = "sift.db", double lease_timeout_s = 30) {
    CoordinatorOptions o;
    o.checkpoint_dir = (dir_ / ("checkpoints-" + db)).string();
    o.heartbeat_interval_s = 0.1;
    o.lease_timeout_s = lease_timeout_s;
    coordinator_ =
        std::make_unique<Coordinator>(coordinator::OpenSqliteStore((dir_ / db).string()), o);
    server_ = std::make_unique<Server>(coordinator_.get(), options_.client.address);
  }
  void StopCoordinator() {
    server_.reset();
    coordinator_.reset();
  }

  int64_t CreateStudy(const std::string& config = kStudy) {
    int64_t id = 0;
    std::vector<std::string> errors;
    coordinator::Status s = coordinator_->CreateStudy(config, "link.yaml", &id, &errors);
    EXPECT_TRUE(s.ok()) << s.message;
    return id;
  }

  std::vector<coordinator::TrialSummary> Trials(int64_t study) {
    std::vector<coordinator::TrialSummary> out;
    EXPECT_TRUE(coordinator_->ListTrials(study, &out).ok());
    return out;
  }

  // AcquireTrial as WorkerClient calls it.
  static v1::AcquireTrialResponse Acquire(CoordinatorLink& link) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(link.worker_id());
    v1::AcquireTrialResponse resp;
    grpc::Status s = link.Call("AcquireTrial", [&] {
      return link.stub()->AcquireTrial(link.Context().get(), req, &resp);
    });
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  static grpc::Status Report(CoordinatorLink& link, const v1::TrialAssignment& a, int64_t epoch,
                             double value, v1::ReportProgressResponse* resp,
                             const std::string& checkpoint = "") {
    v1::ReportProgressRequest req;
    req.set_seq(epoch);
    req.set_epoch(epoch);
    (*req.mutable_metrics())["val_accuracy"] = value;
    req.set_checkpoint(checkpoint);
    return link.Report(a, &req, resp);
  }

  // Writes a checkpoint file (as the trainer frames one) where the link wants `name`.
  static std::string WriteCheckpoint(CoordinatorLink& link, const v1::TrialAssignment& a,
                                     const std::string& name, const std::string& payload) {
    const std::string path = link.LocalCheckpoint(a, name);
    common::WriteFramedFile(path, common::kCheckpointMagic, common::kCheckpointVersion, payload);
    return path;
  }

  fs::path dir_;
  int port_ = 0;
  WorkerOptions options_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
};

}  // namespace sift::worker::fixture

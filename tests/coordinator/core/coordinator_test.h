// The Coordinator without gRPC: the fixture its suites share (coordinator_test.cc and the
// files beside it, one per concern).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/checkpoint_names.h"
#include "coordinator/core/coordinator.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace sift::coordinator {

inline std::string Config(const std::string& scheduler = "{type: fifo}", int trials = 3,
                          int epochs = 3, const std::string& budget_extra = "") {
  return "name: t\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "  hidden: {type: int, low: 16, high: 64}\n"
         "trainer: {model: mlp}\n"
         "scheduler: " +
         scheduler +
         "\n"
         "budget: {max_trials: " +
         std::to_string(trials) + ", max_epochs: " + std::to_string(epochs) + budget_extra +
         "}\n"
         "seed: 5\n";
}

class CoordinatorTest : public testing::CoordinatorFixture {
 protected:
  CoordinatorTest() : CoordinatorFixture("sift-coord") {}
  void SetUp() override {
    CoordinatorFixture::SetUp();
    Open();
  }
  // `embedded`: as `sift run` configures it; otherwise as a standalone `sift coordinator`.
  void Open(bool embedded = true) {
    CoordinatorOptions o;
    o.lease_timeout_s = 10;
    o.shutdown_when_idle = embedded;
    o.fail_unrunnable_studies = embedded;
    o.checkpoint_dir = db_.string() + ".checkpoints";
    Reopen(o);
  }
  // Reports epoch `epoch`, checkpointed under its epoch name as workers do by default.
  search::Decision Report(const std::string& w, const Assignment& a, int64_t seq, int64_t epoch,
                          double acc, bool checkpointed = true) {
    search::Decision d;
    Status s =
        c_->ReportProgress(w, a.lease_id, seq, epoch, {{"val_accuracy", acc}},
                           checkpointed ? common::EpochCheckpointName(a.number, epoch) : "", &d);
    EXPECT_TRUE(s.ok()) << s.message;
    return d;
  }

  // Scores the test evaluation a completed study owes its best trial, as a worker would.
  void ScoreBestTrial(const std::string& w) {
    Assignment e = Acquire(w);
    ASSERT_TRUE(e.evaluate_test);
    ASSERT_TRUE(c_->CompleteTrial(w, e.lease_id, {{"test_accuracy", 0.5}}).ok());
  }

  // Writes checkpoint `name` of study `id` where a worker (or an upload) would.
  void WriteCheckpoint(int64_t id, const std::string& name) {
    const auto dir =
        std::filesystem::path(db_.string() + ".checkpoints") / ("study-" + std::to_string(id));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name) << "weights of " << name;
  }
  std::vector<std::string> Checkpoints(int64_t id) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(
             db_.string() + ".checkpoints/study-" + std::to_string(id), ec)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace sift::coordinator

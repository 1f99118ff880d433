// The Coordinator's shared state (core/coordinator_state.h) on a fresh SQLite file per test, with
// a settable clock, for the classes the Coordinator is made of (LeaseEndings, Acquisition) tested
// without it: studies served as it serves them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "coordinator/core/coordinator_state.h"
#include "tests/coordinator/test_clock.h"

namespace sift::coordinator::testing {

// Study `text` parsed and stored in `store`, and its runner as the Coordinator serves it (not
// added to a registry).
inline std::shared_ptr<ServedStudy> StoreStudy(FencedStore& store, const std::string& text,
                                               double now) {
  common::StudyConfig config;
  const auto errors = common::ParseStudyConfig(text, "t.yaml", &config);
  EXPECT_TRUE(errors.empty()) << errors.front();
  StudyRecord r;
  r.name = config.name;
  r.config_text = text;
  r.created_at = now;
  const int64_t id = store.CreateStudy(r);
  return std::make_shared<ServedStudy>(std::make_unique<StudyRunner>(id, std::move(config), now));
}

class StateFixture : public ::testing::Test {
 protected:
  // `prefix`: the test folder's name starts with it.
  explicit StateFixture(const std::string& prefix)
      : dir_(std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~StateFixture() override {
    state_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Opens the state on the database with `o` and the test clock.
  void Open(CoordinatorOptions o) {
    o.clock = clock_.fn();
    state_ = std::make_unique<CoordinatorState>(OpenSqliteStore((dir_ / "sift.db").string()), o);
  }
  double Now() const { return *clock_.now; }
  // A stored study of up to `trials` trials of 3 epochs, served as the Coordinator serves it.
  std::shared_ptr<ServedStudy> ServeStudy(int trials) {
    const std::string text =
        "name: t\n"
        "search_space:\n"
        "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
        "trainer: {model: mlp}\n"
        "seed: 7\n"
        "budget: {max_trials: " +
        std::to_string(trials) + ", max_epochs: 3}\n";
    auto study = StoreStudy(*state_->store_, text, Now());
    state_->studies_.Add(study);
    return study;
  }

  std::filesystem::path dir_;
  TestClock clock_;
  std::unique_ptr<CoordinatorState> state_;
};

}  // namespace sift::coordinator::testing

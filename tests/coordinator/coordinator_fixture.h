// A Coordinator on a fresh SQLite file per test, with a settable clock, and the calls a worker
// and a user make most (register, create a study, acquire a trial). Each suite opens it with
// its own options (Reopen).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/core/coordinator.h"
#include "tests/coordinator/test_clock.h"

namespace sift::coordinator::testing {

class CoordinatorFixture : public ::testing::Test {
 protected:
  // `prefix`: the database file's name starts with it (sift-coord, sift-cost).
  explicit CoordinatorFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  // Names this test's database and removes what an earlier run left; the suite then opens it.
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          (prefix_ + "-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
  }
  void TearDown() override {
    c_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + s);
    std::filesystem::remove_all(db_.string() + ".checkpoints");
  }
  // (Re)starts the coordinator on the database with `o` and the test clock.
  void Reopen(CoordinatorOptions o) {
    c_.reset();
    o.clock = clock_.fn();
    c_ = std::make_unique<Coordinator>(OpenSqliteStore(db_.string()), o);
  }

  std::string Worker(double price = 3.6, const std::string& market = "spot") {
    WorkerRecord in, out;
    in.name = "w";
    in.instance_type = "x";
    in.market = market;
    in.price_per_hour = price;  // 3.6: $0.001 per second
    EXPECT_TRUE(c_->RegisterWorker(in, &out).ok());
    return out.id;
  }
  int64_t Study(const std::string& text) {
    int64_t id = 0;
    std::vector<std::string> errors;
    Status s = c_->CreateStudy(text, "test.yaml", &id, &errors);
    EXPECT_TRUE(s.ok()) << s.message;
    return id;
  }
  Assignment Acquire(const std::string& worker) {
    AcquireResult r;
    Assignment a;
    EXPECT_TRUE(c_->AcquireTrial(worker, &r, &a).ok());
    EXPECT_EQ(r, AcquireResult::kAssigned);
    return a;
  }

  TestClock clock_;
  std::filesystem::path db_;
  std::unique_ptr<Coordinator> c_;

 private:
  std::string prefix_;
};

}  // namespace sift::coordinator::testing

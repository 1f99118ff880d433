// A simulated worker for the soak (tests/soak/soak.h): the real worker's side of the Workers
// service (worker/coordinator_link.h: registration, retries through coordinator restarts,
// heartbeats) without a trainer. It acquires trials and reports a made-up curve each epoch;
// per trial it may be reclaimed mid-trial (PreemptTrial, then it leaves), vanish mid-trial (no
// more calls: its lease expires) or leave after the trial. Its slot then starts a new worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sift::testing::soak {

// One report the coordinator acknowledged: where the store must have it, and what it said.
struct AckedReport {
  std::string lease_id;
  int64_t seq = 0, number = 0, epoch = 0;
  double value = 0;
};

// How a worker's life can end, and what its trials did; summed over every worker.
struct WorkerCounts {
  int64_t registered = 0, trials = 0, completed = 0, preempted = 0, vanished = 0, left = 0;
  int64_t abandoned = 0;  // leases the coordinator no longer honoured (expired or revoked)
  int64_t errors = 0;     // calls that failed for good
  void Add(const WorkerCounts& o);
};

// What every worker shares with the driver.
struct SoakShared {
  std::atomic<int64_t> reports{0};
  std::atomic<bool> done{false};
  std::mutex mu;  // guards what follows
  std::vector<AckedReport> acked;
  WorkerCounts counts;
  std::vector<std::string> errors;  // the first few, for the driver's message
};

struct WorkerFates {
  double preempt = 0.02;  // per trial: reclaimed mid-trial (PreemptTrial), then the worker leaves
  double vanish = 0.01;   // per trial: silent mid-trial, its lease left to expire; it leaves
  double leave = 0.02;    // per trial: leaves after completing it
};

// Runs one worker until SoakShared::done or until its fate ends it; returns how it ended
// ("done", "preempted", "vanished", "left" or "error").
std::string RunSimWorker(const std::string& address, const std::string& name, bool spot,
                         const WorkerFates& fates, uint64_t seed, SoakShared* shared);

// The curve every simulated trial reports, so the check can compare values exactly.
double ReportedValue(int64_t number, int64_t epoch);

}  // namespace sift::testing::soak

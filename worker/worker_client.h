// The sift-worker loop: register, acquire a trial, train it epoch by epoch, report, obey the
// decision, complete. Survives a coordinator restart by retrying with backoff.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/client_channel.h"

namespace sift::worker {

struct WorkerOptions {
  common::ClientOptions client;  // the coordinator's address, TLS and this worker's token
  std::string name;
  std::string instance_type = "local-cpu";
  std::string market = "on-demand";
  double price_per_hour = 0;  // 0: the coordinator's catalog price
  int threads = 1;
  std::string device = "cpu";
  std::string cache_dir;                     // preprocessed-dataset cache; "" disables it
  std::string trial_log_dir = "trial-logs";  // command trials' stdout and stderr, per trial
  bool exit_when_idle = false;  // exit on SHUTDOWN (embedded run) instead of waiting for work
  // With exit_when_idle: leave once no study had work for this worker for this long (the
  // coordinator answers SHUTDOWN); 0 waits for the coordinator to say so (embedded run).
  double idle_exit_seconds = 60;
  double retry_seconds = 120;  // how long to keep retrying an unreachable coordinator
  // After a stop request (SIGTERM), the worker is gone within this many seconds whatever it is
  // doing: a spot VM's notice (Kubernetes' default grace period is 30 s) does not wait.
  double grace_seconds = 25;
  int64_t memory_limit_mb = 0;     // what a trial may use (micro_batch: auto); 0: what is free
  double simulate_preemption = 0;  // spot simulator: chance that a lease is reclaimed
  uint64_t preemption_seed = 0;
};

class WorkerClient {
 public:
  explicit WorkerClient(WorkerOptions options);
  ~WorkerClient();

  // Runs until SHUTDOWN, a stop request, or an unrecoverable error; returns the exit code.
  int Run();
  // Asks the loop to stop after the current optimizer step (SIGTERM handler, async-signal-safe).
  void RequestStop() { stop_ = true; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
};

}  // namespace sift::worker

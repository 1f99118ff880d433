// `sift run`: the embedded default. One process runs the coordinator on 127.0.0.1 with a SQLite
// database in the run directory, starts local sift-worker processes, shows progress, and writes
// the report when the study ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sift::coordinator {

struct RunOptions {
  std::string config_path;     // "" with resume: the study's own config
  std::string out_dir;         // "" -> runs/<study name>-<timestamp>
  bool resume = false;         // --resume DIR: DIR must hold an unfinished study
  bool start_new = false;      // --new: a new study even where DIR holds one
  int workers = 0;             // 0 -> cores / threads per worker
  int threads_per_worker = 0;  // 0 -> config worker.threads, else 1
  std::string prices_path;     // "" -> the bundled examples/prices.json
  std::string worker_binary;   // "" -> sift-worker next to this executable
  double lease_timeout_s = 30;
  std::optional<double> target;
  std::string extra_worker_args;   // appended to every worker's command line (space-separated)
  double simulate_preemption = 0;  // spot simulator: chance that a lease is reclaimed
  uint64_t preemption_seed = 1;
  std::string
      http;  // "" none; else HOST:PORT for the live page and /metrics (coordinator/http/live.h)
  bool http_plaintext = false;  // serve `http` off loopback without TLS
};

// The resume rule (plan.h) picks the study. SIGINT, SIGTERM and SIGHUP pause it: workers
// checkpoint and stop, and a second signal stops them at once.
// Returns the process exit code: 0 done, 1 failed, 2 invalid config or refused, 130 paused.
int RunEmbedded(const RunOptions& options);

// `sift evaluate --run DIR` after the run has ended: opens DIR's database with a coordinator of
// its own on 127.0.0.1 and one local worker, which scores trial `trial` of study `study_id` on
// the test split (once: a trial already scored is only shown). Prints the score; returns 0, 1
// (the evaluation failed or timed out) or 2 (no such trial, or it cannot be scored).
int EvaluateInRunDir(const std::string& run_dir, int64_t study_id, int64_t trial, double timeout_s);

}  // namespace sift::coordinator

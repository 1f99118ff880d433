// `sift-worker train`: one trial from a study config and a parameter JSON, no coordinator. The
// smoke test a user runs before paying for a search: it prints accuracy, throughput and memory.
#pragma once

#include <string>

namespace sift::worker {

struct StandaloneOptions {
  std::string config_path;
  std::string params_json = "{}";
  int epochs = 0;   // 0: the config's budget.max_epochs
  int threads = 0;  // --threads; 0: the config's worker.threads (1 when that is 0 too)
  std::string device = "cpu";
  std::string cache_dir;
  int64_t memory_limit_mb = 0;  // what the trial may use (micro_batch: auto); 0: what is free
  std::string checkpoint_path;
  std::string resume_path;
};

// Returns the exit code: 0 trained, 1 failed, 2 bad config or parameters.
int RunStandalone(const StandaloneOptions& options);

}  // namespace sift::worker

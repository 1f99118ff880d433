// Command trials: the user's own program, run once per lease (fork/exec, its own process group).
// It gets the trial's parameters as --name=value arguments and as JSON in SIFT_PARAMS, plus
// SIFT_TRIAL, SIFT_EPOCH_START, SIFT_MAX_EPOCHS and SIFT_CHECKPOINT_DIR, and reports with
// `{"sift": {"epoch": N, ...}}` lines on stdout (report_line.h). SIFT_CHECKPOINT_DIR is uploaded
// as the trial's checkpoint after each report and restored before a resumed lease. The contract
// for users is docs/workloads.md, section 3.
#pragma once

#include <atomic>
#include <string>

#include "worker/trial_runner.h"

namespace sift::worker {

class CoordinatorLink;
class SpotSimulator;

class CommandRunner : public TrialRunner {
 public:
  // `log_dir`: where each trial's stdout and stderr are kept (appended across its leases).
  CommandRunner(CoordinatorLink* link, SpotSimulator* spot, std::atomic<bool>* stop,
                std::string log_dir)
      : link_(link), spot_(spot), stop_(stop), log_dir_(std::move(log_dir)) {}
  void Run(const v1::TrialAssignment& a) override;

 private:
  CoordinatorLink* link_;
  SpotSimulator* spot_;
  std::atomic<bool>* stop_;
  std::string log_dir_;
};

}  // namespace sift::worker

// One kind of trial: a runner runs one TrialAssignment to its end through the coordinator link,
// reporting each epoch and obeying the decision. Run never throws: failures become FailTrial.
// The built-in trainer (builtin_runner.h) and a user's program (command_runner.h) are runners.
#pragma once

#include "sift/v1/workers_service.pb.h"

namespace sift::worker {

class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  virtual void Run(const v1::TrialAssignment& a) = 0;
};

}  // namespace sift::worker

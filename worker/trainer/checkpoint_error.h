// The error a trial checkpoint that cannot be used raises; torch-free, so the runners can catch
// it without the archive code (checkpoint.h).
#pragma once

#include <stdexcept>

#include "common/checkpoint_file.h"

namespace sift::worker {

// A checkpoint that cannot be used: missing, truncated, corrupt, or from another configuration.
// The message names the file and the problem.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using common::kCheckpointVersion;

}  // namespace sift::worker

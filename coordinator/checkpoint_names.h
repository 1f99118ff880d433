// Checkpoint file names: the one convention the coordinator and the workers share.
#pragma once

#include <cstdint>
#include <string>

namespace sift::coordinator {

// Written by the worker after epoch `epoch` and before reporting it.
inline std::string EpochCheckpointName(int64_t trial, int64_t epoch) {
  return "trial-" + std::to_string(trial) + "-e" + std::to_string(epoch) + ".ckpt";
}

// Written on a preemption notice, mid-epoch, after the last finished optimizer step.
inline std::string PreemptCheckpointName(int64_t trial, int64_t epoch, int64_t step) {
  return "trial-" + std::to_string(trial) + "-e" + std::to_string(epoch) + "-s" +
         std::to_string(step) + ".ckpt";
}

// Whether `name` is a plain checkpoint file name of trial `trial` (no directories, no tricks).
inline bool IsCheckpointNameOf(const std::string& name, int64_t trial) {
  const std::string prefix = "trial-" + std::to_string(trial) + "-e";
  if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 6) return false;
  if (name.compare(name.size() - 5, 5, ".ckpt") != 0) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return false;
  }
  return name.find("..") == std::string::npos;
}

}  // namespace sift::coordinator

// Checkpoint file names: the one convention the coordinator and the workers share.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace sift::common {

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

// Where a checkpoint stands in its trial's training: epochs done, then optimizer steps into the
// next epoch (0 for an epoch's own checkpoint). Later positions compare greater.
struct CheckpointPosition {
  int64_t trial = 0, epoch = 0, step = 0;
  bool operator<(const CheckpointPosition& o) const {
    return epoch < o.epoch || (epoch == o.epoch && step < o.step);
  }
};

// Reads a name written by EpochCheckpointName or PreemptCheckpointName; nullopt for any other.
inline std::optional<CheckpointPosition> ParseCheckpointName(const std::string& name) {
  long long trial = -1, epoch = -1, step = -1;
  std::string canonical;
  if (std::sscanf(name.c_str(), "trial-%lld-e%lld-s%lld", &trial, &epoch, &step) == 3) {
    canonical = PreemptCheckpointName(trial, epoch, step);
  } else if (std::sscanf(name.c_str(), "trial-%lld-e%lld", &trial, &epoch) == 2) {
    step = 0;
    canonical = EpochCheckpointName(trial, epoch);
  }
  // Only the exact spelling the writers use: no signs, spaces, leading zeros or trailing text.
  if (canonical != name || trial < 0 || epoch < 0 || step < 0) return std::nullopt;
  return CheckpointPosition{trial, epoch, step};
}

}  // namespace sift::common

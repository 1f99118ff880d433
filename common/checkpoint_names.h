// Checkpoint file names: the one convention the coordinator and the workers share.
#pragma once

#include <cstdint>
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

// Where a checkpoint stands in its trial's training: epochs done, then optimizer steps into the
// next epoch (0 for an epoch's own checkpoint). Later positions compare greater.
struct CheckpointPosition {
  int64_t trial = 0, epoch = 0, step = 0;
  bool operator<(const CheckpointPosition& o) const {
    return epoch < o.epoch || (epoch == o.epoch && step < o.step);
  }
};

namespace checkpoint_names_detail {

// A decimal number as the writers print it: 0, or a nonzero digit then at most 17 more digits
// (no sign, no leading zero, no overflow). Advances `pos` past it.
inline bool ReadNumber(const std::string& s, size_t* pos, int64_t* out) {
  size_t i = *pos;
  if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
  if (s[i] == '0') {
    *out = 0;
    *pos = i + 1;
    return i + 1 >= s.size() || s[i + 1] < '0' || s[i + 1] > '9';
  }
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (i - *pos >= 18) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  *pos = i;
  return true;
}

inline bool ReadLiteral(const std::string& s, size_t* pos, const char* lit) {
  const std::string l(lit);
  if (s.compare(*pos, l.size(), l) != 0) return false;
  *pos += l.size();
  return true;
}

}  // namespace checkpoint_names_detail

// The one grammar of checkpoint names, exactly what the writers above produce:
//   trial-<N>-e<N>.ckpt  |  trial-<N>-e<N>-s<N>.ckpt      N: 0 or [1-9][0-9]{0,17}
// Anything else (signs, spaces, leading zeros, directories, other suffixes) is nullopt.
inline std::optional<CheckpointPosition> ParseCheckpointName(const std::string& name) {
  using checkpoint_names_detail::ReadLiteral;
  using checkpoint_names_detail::ReadNumber;
  CheckpointPosition p;
  size_t pos = 0;
  if (!ReadLiteral(name, &pos, "trial-") || !ReadNumber(name, &pos, &p.trial) ||
      !ReadLiteral(name, &pos, "-e") || !ReadNumber(name, &pos, &p.epoch)) {
    return std::nullopt;
  }
  if (ReadLiteral(name, &pos, "-s") && !ReadNumber(name, &pos, &p.step)) return std::nullopt;
  if (!ReadLiteral(name, &pos, ".ckpt") || pos != name.size()) return std::nullopt;
  return p;
}

// Whether `name` is a checkpoint name (the grammar above) of trial `trial`.
inline bool IsCheckpointNameOf(const std::string& name, int64_t trial) {
  const auto p = ParseCheckpointName(name);
  return p && p->trial == trial;
}

}  // namespace sift::common

#include "coordinator/core/checkpoint_retention.h"

#include "common/checkpoint_names.h"

namespace sift::coordinator {

std::vector<std::string> CheckpointsToDelete(const std::vector<std::string>& files,
                                             const std::map<int64_t, TrialCheckpointState>& trials,
                                             CheckpointKeep keep) {
  std::vector<std::string> out;
  // A partial write (a worker's "<name>.tmp.*", an upload's "<name>.part") outlives its writer
  // only if that was killed mid-write; once the trial settles no one will finish it.
  for (const auto& name : files) {
    const size_t end = name.find(".ckpt.");
    if (end == std::string::npos) continue;
    const std::string tail = name.substr(end + 5);
    if (tail != ".part" && tail.rfind(".tmp.", 0) != 0) continue;
    const auto pos = common::ParseCheckpointName(name.substr(0, end + 5));
    if (!pos) continue;
    const auto it = trials.find(pos->trial);
    if (it != trials.end() && it->second.settled) out.push_back(name);
  }
  if (keep == CheckpointKeep::kAll) return out;
  // kBest keeps one settled trial: the best final value, the lower number on a tie (as the
  // study's best trial). Settled values never change, so a trial dropped here never comes back.
  std::optional<int64_t> best;
  for (const auto& [number, t] : trials) {
    if (!t.settled || t.failed || !t.score) continue;
    if (!best || *t.score > *trials.at(*best).score) best = number;
  }
  for (const auto& name : files) {
    const auto pos = common::ParseCheckpointName(name);
    if (!pos) continue;
    const auto it = trials.find(pos->trial);
    if (it == trials.end()) continue;
    const TrialCheckpointState& t = it->second;
    if (keep == CheckpointKeep::kBest && t.settled && best != pos->trial) {
      out.push_back(name);
      continue;
    }
    if (name == t.newest) continue;
    const auto newest = common::ParseCheckpointName(t.newest);
    // Older than the recorded one: superseded. Newer: a report may still name it, unless the
    // trial is settled (then it was never recorded: a lost VM's or a refused report's).
    if (t.settled || (newest && *pos < *newest)) out.push_back(name);
  }
  return out;
}

}  // namespace sift::coordinator

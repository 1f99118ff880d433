// Which checkpoint files a study no longer needs. Pure: the coordinator lists the directory,
// says what each trial's state is, and deletes what this returns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sift::coordinator {

enum class CheckpointKeep {
  kAll,     // every checkpoint ever written
  kLatest,  // each trial's newest recorded one (what a resume or its final model needs)
  kBest,    // as kLatest while trials run; of finished trials only the best one's
};

// What the coordinator knows of one trial.
struct TrialCheckpointState {
  std::string newest;    // the newest checkpoint recorded for it (its resume point); "" none
  bool settled = false;  // finished (completed, stopped or failed) and no lease open
  bool failed = false;
  std::optional<double> score;  // final objective value, higher is better
};

// Names among `files` (one study's checkpoint directory) to delete under `keep`. A file newer
// than its trial's recorded checkpoint stays while the trial may still report it; files that
// are not checkpoint names, or name trials not in `trials`, are never touched. Partial writes
// of a settled trial go under every `keep`.
std::vector<std::string> CheckpointsToDelete(const std::vector<std::string>& files,
                                             const std::map<int64_t, TrialCheckpointState>& trials,
                                             CheckpointKeep keep);

}  // namespace sift::coordinator

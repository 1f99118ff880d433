// The folders a worker keeps under the temp directory while it runs (checkpoints on their way to
// or from the coordinator, command trials' work folders), named for the process, and the sweep of
// those a worker killed by SIGKILL or the OOM killer left behind: it cannot remove its own, and
// a chaos-tested or spot-simulated machine gathered hundreds (0.8-5 MB each: partial checkpoints).
#pragma once

#include <string>

namespace sift::worker {

// <temp>/<prefix><pid>-<n><suffix>: n counts within the process, so two links in one process (the
// soak's simulated workers) never share, or remove, each other's folder. Not created.
std::string ScratchPath(const std::string& prefix, const std::string& suffix = "");

// Removes this user's folders in `dir` named <prefix><pid> or <prefix><pid>-... whose process is
// gone and that nothing has changed for `min_age_seconds` (a process in another PID namespace
// sharing the folder looks gone; the age keeps its busy folders, and its idle ones are made again
// on use). Never this process's own. Returns how many went; failures are logged, not thrown.
int SweepDeadScratch(const std::string& dir, const std::string& prefix,
                     double min_age_seconds = 600);

// SweepDeadScratch of the temp directory, once per prefix in a process.
void SweepDeadScratchOnce(const std::string& prefix);

}  // namespace sift::worker

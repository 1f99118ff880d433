#include "search/study_view.h"

namespace sift::search {

const char* ToString(TrialState s) {
  switch (s) {
    case TrialState::kPending:
      return "PENDING";
    case TrialState::kRunning:
      return "RUNNING";
    case TrialState::kPaused:
      return "PAUSED";
    case TrialState::kCompleted:
      return "COMPLETED";
    case TrialState::kStopped:
      return "STOPPED";
    case TrialState::kFailed:
      return "FAILED";
    case TrialState::kDiverged:
      return "DIVERGED";
  }
  return "UNKNOWN";
}

}  // namespace sift::search

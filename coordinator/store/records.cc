#include "coordinator/store/records.h"

#include <stdexcept>

namespace sift::coordinator {

const char* ToString(StudyState s) {
  switch (s) {
    case StudyState::kRunning:
      return "RUNNING";
    case StudyState::kCompleted:
      return "COMPLETED";
    case StudyState::kCancelled:
      return "CANCELLED";
    case StudyState::kFailed:
      return "FAILED";
    case StudyState::kPaused:
      return "PAUSED";
  }
  return "UNKNOWN";
}

StudyState StudyStateFromString(const std::string& s) {
  if (s == "RUNNING") return StudyState::kRunning;
  if (s == "COMPLETED") return StudyState::kCompleted;
  if (s == "CANCELLED") return StudyState::kCancelled;
  if (s == "FAILED") return StudyState::kFailed;
  if (s == "PAUSED") return StudyState::kPaused;
  throw std::runtime_error("unknown study state '" + s + "' in the database");
}

search::TrialState TrialStateFromString(const std::string& s) {
  using search::TrialState;
  for (TrialState t :
       {TrialState::kPending, TrialState::kRunning, TrialState::kPaused, TrialState::kCompleted,
        TrialState::kStopped, TrialState::kFailed, TrialState::kDiverged}) {
    if (s == search::ToString(t)) return t;
  }
  throw std::runtime_error("unknown trial state '" + s + "' in the database");
}

const char* ToString(EvaluationState s) {
  switch (s) {
    case EvaluationState::kPending:
      return "pending";
    case EvaluationState::kRunning:
      return "running";
    case EvaluationState::kDone:
      return "done";
    case EvaluationState::kFailed:
      return "failed";
  }
  return "unknown";
}

EvaluationState EvaluationStateFromString(const std::string& s) {
  for (EvaluationState e : {EvaluationState::kPending, EvaluationState::kRunning,
                            EvaluationState::kDone, EvaluationState::kFailed}) {
    if (s == ToString(e)) return e;
  }
  throw std::runtime_error("unknown evaluation state '" + s + "' in the database");
}

}  // namespace sift::coordinator

// A trial summary as the reports see it, for hand-made report inputs (study 1).
#pragma once

#include <optional>

#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

inline TrialSummary Trial(int64_t n, double dollars, std::optional<double> value, double ended_at,
                          search::TrialState state = search::TrialState::kCompleted) {
  TrialSummary t;
  t.record.study_id = 1;
  t.record.number = n;
  t.record.state = state;
  t.record.ended_at = ended_at;
  t.dollars = dollars;
  t.objective = value;
  return t;
}

}  // namespace sift::coordinator

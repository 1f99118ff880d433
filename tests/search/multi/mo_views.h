// Hand-made multi-objective views for the tests of search/multi/'s searchers and schedulers:
// objectives (val_accuracy, maximize) and (dollars, minimize), one constraint (size <= 1).
#pragma once

#include <cstdint>
#include <vector>

#include "search/study_view.h"

namespace sift::search::testing {

inline StudyView MoStudy(int64_t max_resource = 9) {
  StudyView study;
  study.objectives = {{"val_accuracy", true}, {"dollars", false}};
  study.objective = study.objectives[0];
  study.constraints = {{"size", 1.0, true}};
  study.max_resource = max_resource;
  return study;
}

// Appends a trial with (accuracy, dollars, size) at each epoch 1, 2, ...; `size` NaN: never
// reported.
struct Report {
  double accuracy, dollars, size;
};
inline TrialView& AddTrial(StudyView& study, TrialState state, const std::vector<Report>& reports) {
  TrialView t;
  t.number = static_cast<int64_t>(study.trials.size());
  t.state = state;
  t.more_values.resize(1);
  t.constraint_values.resize(1);
  int64_t epoch = 0;
  for (const Report& r : reports) {
    ++epoch;
    t.values[epoch] = r.accuracy;
    t.more_values[0][epoch] = r.dollars;
    if (r.size == r.size) t.constraint_values[0][epoch] = r.size;
  }
  study.trials.push_back(t);
  return study.trials.back();
}

}  // namespace sift::search::testing

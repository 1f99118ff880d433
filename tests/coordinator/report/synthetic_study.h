// A finished study of many trials written through the real SQLite Store, for the HTML report's
// tests and its 10,000-trial measurement (bench/README.md): ASHA-like stops and promotions, spot
// preemptions with redone work, several workers, idle stretches. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>

#include "coordinator/store/store.h"

namespace sift::testing {

struct SyntheticStudy {
  int64_t trials = 10000;
  int workers = 16;
  uint64_t seed = 1;
  std::string name = "synthetic";
  double preempt_chance = 0.05;  // per lease
  // A study config (an example's text): its name, space, objective and budget are the study's,
  // its parameters drawn from its space. "" writes the built-in MLP study above.
  std::string config_text;
  int diverged = 0;     // trials whose objective turns NaN at their last epoch (DIVERGED)
  bool alerts = false;  // the 50/80/100% budget alerts recorded as the coordinator records them
};

// Returns the new study's id.
int64_t WriteSyntheticStudy(coordinator::Store& store, const SyntheticStudy& options);

}  // namespace sift::testing

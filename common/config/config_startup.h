// The model-based searchers' random start against the trial budget. TPE starts with 10 random
// trials (Optuna's default): with `max_trials: 10` that is the whole study, random without a word.
#pragma once

#include "common/config/config.h"

namespace sift::common {

// A TPE start the config leaves unset is scaled to a third of max_trials (at least 3, at most
// 10), and said in `config->notes`; a start the config sets (or GP's) that covers every trial
// is said there too. Called by ParseStudyConfig once the budget and searcher are read.
void FitRandomStartToBudget(StudyConfig* config);

}  // namespace sift::common

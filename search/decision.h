// What a scheduler answers at each report.
#pragma once

#include <cstdint>
#include <string>

#include "search/param_value.h"

namespace sift::search {

enum class Action {
  kContinue,  // train on
  kStop,      // end the trial early (terminal)
  kPause,     // park it at a rung; it may be promoted and resumed from its checkpoint later
};

const char* ToString(Action a);

struct Decision {
  Action action = Action::kContinue;
  std::string
      reason;  // human-readable, stored with the trial: "no improvement > 0.001 in 3 epochs"

  static Decision Continue(std::string why = "") { return {Action::kContinue, std::move(why)}; }
  static Decision Stop(std::string why) { return {Action::kStop, std::move(why)}; }
  static Decision Pause(std::string why) { return {Action::kPause, std::move(why)}; }
};

// Population-based training's exploit: `trial` resumes from `from_trial`'s checkpoint at `epoch`
// with `params` (the donor's, explored). The coordinator carries it out by copying the
// checkpoint reference; the worker never decides it.
struct Exploit {
  int64_t trial = 0;
  int64_t from_trial = 0;
  int64_t epoch = 0;
  Params params;
  std::string reason;  // "pbt: epoch 4: copies trial 2 (0.91 > 0.72); lr 0.01 -> 0.012"
};

}  // namespace sift::search

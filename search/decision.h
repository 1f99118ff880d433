// What a scheduler answers at each report.
#pragma once

#include <string>

namespace sift::search {

enum class Action {
  kContinue,  // train on
  kStop,      // end the trial early (terminal)
  kPause,     // park it at a rung; it may be promoted and resumed from its checkpoint later
};

const char* ToString(Action a);

struct Decision {
  Action action = Action::kContinue;
  std::string reason;  // human-readable, stored with the trial: "no improvement > 0.001 in 3 epochs"

  static Decision Continue(std::string why = "") { return {Action::kContinue, std::move(why)}; }
  static Decision Stop(std::string why) { return {Action::kStop, std::move(why)}; }
  static Decision Pause(std::string why) { return {Action::kPause, std::move(why)}; }
};

}  // namespace sift::search

#include "search/decision.h"

namespace sift::search {

const char* ToString(Action a) {
  switch (a) {
    case Action::kContinue:
      return "CONTINUE";
    case Action::kStop:
      return "STOP";
    case Action::kPause:
      return "PAUSE";
  }
  return "UNKNOWN";
}

}  // namespace sift::search

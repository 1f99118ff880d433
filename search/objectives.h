// What a study optimizes and what it must respect (issue 26): one to four objectives and any
// number of constraints on reported or measured metrics. Shared by the config, the searchers and
// schedulers, and the coordinator, so all three agree on one model.
#pragma once

#include <cmath>
#include <string>

namespace sift::search {

struct Objective {
  std::string metric = "val_accuracy";
  bool maximize = true;
};

// `metric <= bound` (upper) or `metric >= bound`. A value that is not finite violates it.
struct Constraint {
  std::string metric;
  double bound = 0;
  bool upper = true;

  // How far a value lies outside the bound: 0 when it holds, +inf when the value is not finite.
  double Violation(double value) const {
    if (!std::isfinite(value)) return INFINITY;
    const double over = upper ? value - bound : bound - value;
    return over > 0 ? over : 0.0;
  }
  bool Holds(double value) const { return Violation(value) == 0.0; }
};

}  // namespace sift::search

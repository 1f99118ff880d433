// Whether two study config texts say the same thing, and if not, where they first differ: what
// `sift run` checks before it resumes a study from a run directory.
#pragma once

#include <string>

namespace sift::common {

// "" when `a` and `b` hold the same keys and values (key order, comments, spacing, quoting and
// number spelling such as 1e-3 / 0.001 aside). Otherwise the first difference in document order,
// e.g. "budget.max_trials: 4 in the study, 6 in quick.yaml", with `a_name`/`b_name` naming them.
std::string FirstConfigDifference(const std::string& a, const std::string& b,
                                  const std::string& a_name, const std::string& b_name);

}  // namespace sift::common

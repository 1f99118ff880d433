// Bounds on a study config, so that neither `sift validate` nor a coordinator's CreateStudy can be
// made to spend unbounded time or memory by one input (a categorical listing one value 8,000
// times, an alias-expanded YAML tree, thousands of parameters). Each limit is checked before the
// work it bounds, and an error names the limit, the size found and where.
#pragma once

#include <cstddef>
#include <string>

namespace sift::common {

struct ConfigLimits {
  size_t max_bytes = 128 * 1024;   // the config text (a real one is a few hundred bytes)
  size_t max_nodes = 20000;        // YAML nodes walked, each alias expansion counted again
  size_t max_depth = 16;           // nesting of maps and lists (a real config has 4)
  size_t max_parameters = 64;      // entries of search_space
  size_t max_choices = 1000;       // choices of one categorical (and values of one condition)
  size_t max_condition_depth = 8;  // parent -> child chains of conditions
  size_t max_errors = 100;         // errors reported; the rest are counted in one line

  // For configs accepted once already (a restart replays them): limits lowered since then must
  // not lose a study.
  static ConfigLimits None() {
    constexpr size_t kAny = static_cast<size_t>(-1);
    return {kAny, kAny, kAny, kAny, kAny, kAny, kAny};
  }
};

// "search_space.x.choices: 8000 choices, over the limit of 1000 (max_choices)".
std::string OverLimit(size_t found, const std::string& what, size_t limit, const char* name);

}  // namespace sift::common

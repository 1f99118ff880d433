// The check both contract suites make: every type the factory registers has a case, so a new
// searcher or scheduler cannot skip the contract.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sift::search::testing {

template <class Case>
void ExpectACaseForEveryType(const std::vector<std::string>& types,
                             const std::vector<Case>& cases) {
  for (const std::string& type : types) {
    EXPECT_TRUE(
        std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.type == type; }))
        << "no contract case for the registered type '" << type << "'";
  }
}

// Every type of `types` outside `several` is refused with two objectives, by one error
// "type: <type> supports one objective only; with several objectives use <alternatives>".
// `make(type, errors)` builds it with two objectives and says whether it got one. Returns how
// many were refused.
template <class Make>
int ExpectRefusedWithSeveral(const std::vector<std::string>& types,
                             const std::vector<std::string>& several,
                             const std::string& alternatives, Make make) {
  int refused = 0;
  for (const std::string& type : types) {
    if (std::find(several.begin(), several.end(), type) != several.end()) continue;
    std::vector<std::string> errors;
    EXPECT_FALSE(make(type, &errors)) << type;
    EXPECT_EQ(errors, std::vector<std::string>{"type: " + type +
                                               " supports one objective only; with several "
                                               "objectives use " +
                                               alternatives});
    ++refused;
  }
  return refused;
}

}  // namespace sift::search::testing

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
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(),
                            [&](const Case& c) { return c.type == type; }))
        << "no contract case for the registered type '" << type << "'";
  }
}

}  // namespace sift::search::testing

// Two `sift coordinator`s on one PostgreSQL database, a study submitted to the first: where the
// study lease tests (takeover, fencing) start.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {

struct TwoCoordinators {
  std::unique_ptr<Process> first, second;
  std::string first_address, second_address;
};

// Starts both on `url` with `flags` (logs first.log and second.log in `dir`) and submits
// `config` to the first; false, with a test failure, when one did not start or the submit
// failed.
inline bool StartTwoCoordinators(const std::string& url, const std::string& dir,
                                 const std::vector<std::string>& flags, const std::string& config,
                                 TwoCoordinators* out) {
  const int first_port = StartSiftCoordinator(&out->first, url, flags, dir + "/first.log");
  const int second_port = StartSiftCoordinator(&out->second, url, flags, dir + "/second.log");
  if (first_port <= 0 || second_port <= 0) return false;
  out->first_address = "127.0.0.1:" + std::to_string(first_port);
  out->second_address = "127.0.0.1:" + std::to_string(second_port);
  std::string output;
  if (RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", config),
                  "--coordinator", out->first_address},
                 &output) != 0) {
    ADD_FAILURE() << "sift submit failed: " << output;
    return false;
  }
  return true;
}

}  // namespace sift::testing

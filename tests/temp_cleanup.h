// Test folders that go when the test process ends with every test passed. Each ctest test runs in
// a process of its own, and folders left behind added up (500 MB a run, 24 GB on one machine). A
// failed test's folders stay for a look (their paths go to stderr), as do all of them with
// SIFT_KEEP_TEST_DIRS set; only the process that made them removes them, not a forked child.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace sift::testing {
namespace temp_cleanup {

struct Registry {
  std::mutex mu;
  std::vector<std::string> dirs;
  pid_t owner = 0;
};

// Never destroyed: the exit handler runs after static destructors may have.
inline Registry& Folders() {
  static Registry* r = new Registry;
  return *r;
}

inline void RemoveAll() {
  Registry& r = Folders();
  std::lock_guard<std::mutex> lock(r.mu);
  if (getpid() != r.owner || std::getenv("SIFT_KEEP_TEST_DIRS") != nullptr) return;
  const bool passed = ::testing::UnitTest::GetInstance()->Passed();
  for (const std::string& dir : r.dirs) {
    if (!passed) {
      std::fprintf(stderr, "test folder kept (a test failed): %s\n", dir.c_str());
      continue;
    }
    std::error_code ec;  // a process still writing there must not fail the run
    std::filesystem::remove_all(dir, ec);
  }
}

}  // namespace temp_cleanup

inline void RemoveAtExitIfPassed(const std::string& dir) {
  temp_cleanup::Registry& r = temp_cleanup::Folders();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.owner == 0) {
    r.owner = getpid();
    std::atexit(temp_cleanup::RemoveAll);
  }
  if (getpid() == r.owner) r.dirs.push_back(dir);
}

}  // namespace sift::testing

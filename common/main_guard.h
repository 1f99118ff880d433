// The top level of sift and sift-worker: no exception reaches std::terminate (which aborts with
// exit 134 and a bare "terminate called after throwing ..."). An exception escaping main is
// logged with the program and what it was doing, and the process exits 1; one escaping another
// thread is logged the same way before the process exits 1. What the Store already committed
// stays committed: SQLite transactions are atomic, so the database stays readable.
#pragma once

#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <typeinfo>

namespace sift::common {

// What the running exception says, with its type for anything that is not a std::exception.
inline std::string DescribeCurrentException() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

inline std::string& GuardedProgram() {
  static std::string name = "sift";
  return name;
}

[[noreturn]] inline void OnTerminate() {
  const std::exception_ptr current = std::current_exception();
  std::string what = "std::terminate without an exception (a joinable thread destroyed?)";
  if (current) {
    try {
      std::rethrow_exception(current);
    } catch (...) {
      what = "uncaught exception in a background thread: " + DescribeCurrentException();
    }
  }
  spdlog::critical("{}: fatal: {}", GuardedProgram(), what);
  spdlog::default_logger()->flush();
  std::_Exit(1);
}

// Runs `body` as main. `program` names it in the log ("sift report", "sift-worker").
inline int GuardedMain(const std::string& program, const std::function<int()>& body) {
  GuardedProgram() = program;
  std::set_terminate(OnTerminate);
  // SPDLOG_LEVEL=warn quiets the per-report lines of a busy coordinator (or =debug for more).
  spdlog::cfg::load_env_levels();
  try {
    return body();
  } catch (...) {
    spdlog::critical("{}: fatal: {}", program, DescribeCurrentException());
    spdlog::default_logger()->flush();
    return 1;
  }
}

}  // namespace sift::common

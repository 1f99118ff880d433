// How often a study's progress reaches the log at info. Each report has a line ("trial T epoch
// E/M: metrics -> decision"); at training speed (an epoch takes seconds or minutes) every one is
// shown, but a study with many fast workers reports thousands a second, and a line each (its
// formatting and a write to the log) then costs the thread that answers the reports more than
// the report's own write. So a study's report goes to info only when its last info line is at
// least `every` old, and says how many came since; the others go to debug
// (SPDLOG_LEVEL=debug shows every one), like a tuner's periodic status table.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace sift::coordinator {

class ProgressLog {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic

  explicit ProgressLog(double every_seconds = 1.0, Clock clock = SteadySeconds)
      : every_(every_seconds), clock_(std::move(clock)) {}

  // Whether study `study_id`'s report now gets an info line; if so, `since` is set to its
  // reports that did not since the last one. Thread-safe.
  bool TakeInfo(int64_t study_id, int64_t* since) {
    const double now = clock_();
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, first] = studies_.try_emplace(study_id);
    Study& s = it->second;
    if (!first && now - s.last_info < every_) {
      ++s.unshown;
      return false;
    }
    s.last_info = now;
    *since = s.unshown;
    s.unshown = 0;
    return true;
  }

  static double SteadySeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  struct Study {
    double last_info = 0;
    int64_t unshown = 0;
  };
  const double every_;
  const Clock clock_;
  std::mutex mu_;
  std::map<int64_t, Study> studies_;
};

}  // namespace sift::coordinator

#include "worker/scratch_dirs.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>

#include "common/posix_fs.h"

namespace sift::worker {

namespace fs = std::filesystem;

std::string ScratchPath(const std::string& prefix, const std::string& suffix) {
  static std::atomic<int64_t> next{0};
  return (fs::temp_directory_path() /
          (prefix + std::to_string(getpid()) + "-" + std::to_string(next++) + suffix))
      .string();
}

namespace {

// The pid in <prefix><pid>[-...], or 0 when the name is not one of ours.
pid_t PidIn(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string rest = name.substr(prefix.size());
  const size_t end = rest.find('-');
  const std::string digits = rest.substr(0, end);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return static_cast<pid_t>(std::atol(digits.c_str()));
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

int SweepDeadScratch(const std::string& dir, const std::string& prefix, double min_age_seconds) {
  int removed = 0;
  const std::time_t now = std::time(nullptr);
  std::error_code ec;
  // Advanced with an error code: a folder that vanishes or turns unreadable midway ends the
  // sweep, it does not throw out of a worker's start.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    const pid_t pid = PidIn(name, prefix);
    struct stat st;
    // lstat: a link named like ours is not followed, and not ours to judge.
    // Only this user's: on a shared node another user's folder is theirs to remove (and ours
    // could not remove it, so every start would warn).
    if (pid <= 0 || lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid()) {
      continue;
    }
    if (static_cast<double>(now - st.st_mtime) < min_age_seconds || Alive(pid)) continue;
    if (std::string err = common::RemoveAll(e.path().string()); !err.empty()) {
      spdlog::warn("could not remove a dead worker's scratch folder: {}", err);
      continue;
    }
    ++removed;
  }
  if (removed > 0) {
    spdlog::info("removed {} scratch folder(s) {}* of workers no longer running from {}", removed,
                 prefix, dir);
  }
  return removed;
}

void SweepDeadScratchOnce(const std::string& prefix) {
  static std::mutex mu;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!done.insert(prefix).second) return;
  }
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  if (!ec) SweepDeadScratch(temp.string(), prefix);
}

}  // namespace sift::worker

#include "worker/trainer/process_stats.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace sift::worker {
namespace {

// Reads a "Key:   123 kB" line from /proc/self/status.
int64_t StatusKilobytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() &&
        line[key.size()] == ':') {
      return std::stoll(line.substr(key.size() + 1));
    }
  }
  return 0;
}

// The first number in `path`, or -1 ("max" and unreadable files alike).
int64_t ReadNumber(const std::string& path) {
  std::ifstream in(path);
  int64_t v = -1;
  if (!(in >> v)) return -1;
  return v;
}

int64_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) == 0) return std::stoll(line.substr(key.size())) * 1024;
  }
  return 0;
}

}  // namespace

int64_t AvailableMemoryBytes() {
  int64_t available = MemAvailableBytes();
  const int64_t limit = ReadNumber("/sys/fs/cgroup/memory.max");
  const int64_t used = ReadNumber("/sys/fs/cgroup/memory.current");
  if (limit > 0 && used >= 0) {
    const int64_t headroom = std::max<int64_t>(0, limit - used);
    available = available > 0 ? std::min(available, headroom) : headroom;
  }
  return available;
}

int64_t PeakRssBytes() { return StatusKilobytes("VmHWM") * 1024; }
int64_t CurrentRssBytes() { return StatusKilobytes("VmRSS") * 1024; }

}  // namespace sift::worker

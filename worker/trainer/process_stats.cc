#include "worker/trainer/process_stats.h"

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

}  // namespace

int64_t PeakRssBytes() { return StatusKilobytes("VmHWM") * 1024; }
int64_t CurrentRssBytes() { return StatusKilobytes("VmRSS") * 1024; }

}  // namespace sift::worker

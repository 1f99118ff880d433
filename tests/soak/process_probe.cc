#include "tests/soak/process_probe.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sift::testing::soak {

namespace fs = std::filesystem;

int64_t ResidentKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    int64_t kb = -1;
    fields >> kb;
    return kb;
  }
  return -1;
}

int64_t OpenFds(pid_t pid) {
  std::error_code ec;
  fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec);
  if (ec) return -1;
  int64_t n = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

int64_t SqliteBytes(const std::string& path) {
  int64_t total = 0;
  for (const std::string& p : {path, path + "-wal"}) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (!ec) total += static_cast<int64_t>(size);
  }
  return total;
}

}  // namespace sift::testing::soak

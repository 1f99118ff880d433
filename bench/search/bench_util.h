// Small helpers shared by the search benchmarks: timing, reference files, machine description.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sift::bench {

inline double NowMs() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// `key value` lines written by optuna_reference.py; empty when the file is absent.
inline std::map<std::string, std::string> ReadReference(const char* path) {
  std::map<std::string, std::string> out;
  if (path == nullptr) return out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string k, v;
    if (s >> k) {
      std::getline(s >> std::ws, v);
      out[k] = v;
    }
  }
  return out;
}

inline void PrintMachine() {
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::printf("machine: %s, %u hardware threads; search/ is single-threaded, no BLAS (Eigen %d.%d.%d, "
              "SIMD: %s); compiler %s\n",
              cpu.c_str(), std::thread::hardware_concurrency(), EIGEN_WORLD_VERSION,
              EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse(),
              __VERSION__);
}

}  // namespace sift::bench

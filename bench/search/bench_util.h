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
#include <tuple>
#include <vector>

#include "search/options.h"

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

// Searchers named on a command line, "type[:key=value[:key=value...]],...": (label, type,
// options). A value is true/false, an integer, a number, or else a string.
inline std::vector<std::tuple<std::string, std::string, search::Options>> ParseSearchers(
    const std::string& arg) {
  std::vector<std::tuple<std::string, std::string, search::Options>> out;
  std::stringstream list(arg);
  for (std::string s; std::getline(list, s, ',');) {
    std::stringstream parts(s);
    std::string type, kv;
    std::getline(parts, type, ':');
    search::Options options;
    while (std::getline(parts, kv, ':')) {
      const size_t eq = kv.find('=');
      const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
      if (value == "true" || value == "false") {
        options[key] = value == "true";
      } else if (value.find_first_not_of("0123456789-") == std::string::npos) {
        options[key] = static_cast<int64_t>(std::stoll(value));
      } else if (value.find_first_not_of("0123456789-+.e") == std::string::npos) {
        options[key] = std::stod(value);
      } else {
        options[key] = value;
      }
    }
    out.emplace_back(s, type, options);
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
  std::printf(
      "machine: %s, %u hardware threads; search/ is single-threaded, no BLAS (Eigen %d.%d.%d, "
      "SIMD: %s); compiler %s\n",
      cpu.c_str(), std::thread::hardware_concurrency(), EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
      EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse(), __VERSION__);
}

}  // namespace sift::bench

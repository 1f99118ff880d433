#include "coordinator/core/random_id.h"

#include <cstdio>
#include <mutex>
#include <random>

namespace sift::coordinator {

std::string RandomId(const char* prefix) {
  static std::mutex mu;  // called under any study's lock
  static std::mt19937_64 gen{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%016llx", prefix, static_cast<unsigned long long>(gen()));
  return buf;
}

}  // namespace sift::coordinator

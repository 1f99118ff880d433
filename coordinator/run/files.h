// What `sift run` leaves in its run directory while it runs, so that `sift status --run DIR`
// (and cancel, pause, resume, budget) can reach its coordinator without copying a port from
// the log: DIR/coordinator.addr (host:port) and DIR/coordinator.token (mode 0600).
#pragma once

#include <string>

namespace sift::coordinator {

struct RunEndpoint {
  std::string address;
  std::string token;
};

inline constexpr const char* kAddressFile = "coordinator.addr";
inline constexpr const char* kTokenFile = "coordinator.token";

// Writes both files (the token file readable by its owner only); "" or the problem.
std::string WriteRunEndpoint(const std::string& dir, const RunEndpoint& endpoint);
// Reads them back; "" or the problem, naming the directory and what is missing.
std::string ReadRunEndpoint(const std::string& dir, RunEndpoint* out);
// Removes both (the run has ended); never fails.
void RemoveRunEndpoint(const std::string& dir);

}  // namespace sift::coordinator

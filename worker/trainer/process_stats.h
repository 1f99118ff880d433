// Process resource figures from /proc, for logs and benchmarks. Torch-free.
#pragma once

#include <cstdint>

namespace sift::worker {

// Peak resident set size (VmHWM) in bytes; 0 if /proc is unavailable.
int64_t PeakRssBytes();
// Current resident set size (VmRSS) in bytes; 0 if /proc is unavailable.
int64_t CurrentRssBytes();
// Memory this process could still take: MemAvailable, or less when its cgroup (a container's
// memory limit) has less headroom. 0 if neither can be read.
int64_t AvailableMemoryBytes();

}  // namespace sift::worker

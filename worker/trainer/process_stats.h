// Process resource figures from /proc, for logs and benchmarks. Torch-free.
#pragma once

#include <cstdint>

namespace sift::worker {

// Peak resident set size (VmHWM) in bytes; 0 if /proc is unavailable.
int64_t PeakRssBytes();
// Current resident set size (VmRSS) in bytes; 0 if /proc is unavailable.
int64_t CurrentRssBytes();

}  // namespace sift::worker

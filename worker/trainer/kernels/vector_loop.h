// The loop shape the trainer's hand-written kernels share. Torch-free.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sift::worker {

// Runs f(i) for i in [0, n): fixed blocks of 16 that GCC vectorizes at -O2 (its cheap cost model
// only takes loops whose trip count the vector width divides), then a scalar tail. Callers built
// as target clones get 512-bit vectors on CPUs that have them; the results are the same bits.
inline constexpr int64_t kVectorBlock = 16;

// Elements per thread below which a pass is not split over threads (an OpenMP fork costs a few
// microseconds).
inline constexpr int64_t kGrainElements = 16384;

// Items per at::parallel_for chunk when each item is `per_item` elements.
inline int64_t Grain(int64_t per_item) {
  return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, per_item));
}

template <typename F>
__attribute__((always_inline)) inline void ForEach(int64_t n, F f) {
  int64_t i = 0;
  for (; i + kVectorBlock <= n; i += kVectorBlock) {
    for (int64_t j = 0; j < kVectorBlock; ++j) f(i + j);
  }
  for (; i < n; ++i) f(i);
}

}  // namespace sift::worker

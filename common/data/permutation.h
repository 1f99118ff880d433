// A permutation of [0, n) from a 64-bit state: splitmix64 draws and a Fisher-Yates shuffle, the
// same on every platform and standard library (unlike std::shuffle). Data splits and epoch orders.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace sift::data {

inline std::vector<int64_t> SplitMixPermutation(int64_t n, uint64_t state) {
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(next() % static_cast<uint64_t>(i + 1))]);
  }
  return order;
}

}  // namespace sift::data

// A seeded generator whose output is identical on every platform and standard library.
// std::uniform_real_distribution and friends are implementation-defined, so searchers must not
// use them: a restarted coordinator on another build has to make the same suggestions.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace sift::search {

// SplitMix64 step: used to derive independent seeds (e.g. per trial) from a study seed.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Derives a seed from a study seed and a few integers (trial number, stream id, ...).
inline uint64_t DeriveSeed(uint64_t seed, std::initializer_list<uint64_t> parts) {
  uint64_t h = Mix64(seed);
  for (uint64_t p : parts) h = Mix64(h ^ Mix64(p + 0x632BE59BD9B4E019ULL));
  return h;
}

// xoshiro256** with explicit, portable conversions.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) {
      x = Mix64(x);
      s = x;
    }
  }

  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
  double Uniform(double low, double high) { return low + (high - low) * Uniform(); }

  // Uniform integer in [0, n), n > 0 (Lemire's method would be faster; this is exact and simple).
  uint64_t Below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
      r = NextU64();
    } while (r >= limit);
    return r % n;
  }

  // Standard normal by Box-Muller; std::log/cos/sin are correctly rounded enough across libms
  // for our purposes, and a cached second value keeps it cheap.
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = Uniform();
    while (u1 <= 0.0) u1 = Uniform();
    const double u2 = Uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * M_PI * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * M_PI * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace sift::search

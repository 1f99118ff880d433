// bfloat16 as its 16 bits, for the trainer's hand-written kernels: conversions written without
// branches so the loops around them vectorize. Torch-free.
#pragma once

#include <cstdint>
#include <cstring>

namespace sift::worker {

// Float to bf16 rounds to nearest even, NaN to a quiet NaN, as c10::BFloat16 does.
__attribute__((always_inline)) inline uint16_t ToBf16Bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const auto rounded = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  return v != v ? uint16_t{0x7FC0} : rounded;
}

__attribute__((always_inline)) inline float FromBf16Bits(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// An element of a float or bf16 array, as float; and back.
__attribute__((always_inline)) inline float Load(float v) { return v; }
__attribute__((always_inline)) inline float Load(uint16_t b) { return FromBf16Bits(b); }
__attribute__((always_inline)) inline void Store(float& to, float v) { to = v; }
__attribute__((always_inline)) inline void Store(uint16_t& to, float v) { to = ToBf16Bits(v); }

}  // namespace sift::worker

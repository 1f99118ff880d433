#include "search/sobol.h"

#include <array>

#include "search/rng.h"

namespace sift::search {
namespace {

// Rows of new-joe-kuo-6.21201 for dimensions 2..37: degree s, coefficients a, then m_1..m_s.
constexpr uint32_t kJoeKuo[][10] = {
    {1, 0, 1},
    {2, 1, 1, 3},
    {3, 1, 1, 3, 1},
    {3, 2, 1, 1, 1},
    {4, 1, 1, 1, 3, 3},
    {4, 4, 1, 3, 5, 13},
    {5, 2, 1, 1, 5, 5, 17},
    {5, 4, 1, 1, 5, 5, 5},
    {5, 7, 1, 1, 7, 11, 19},
    {5, 11, 1, 1, 5, 1, 1},
    {5, 13, 1, 1, 1, 3, 11},
    {5, 14, 1, 3, 5, 5, 31},
    {6, 1, 1, 3, 3, 9, 7, 49},
    {6, 13, 1, 1, 1, 15, 21, 21},
    {6, 16, 1, 3, 1, 13, 27, 49},
    {6, 19, 1, 1, 1, 15, 7, 5},
    {6, 22, 1, 3, 1, 15, 13, 25},
    {6, 25, 1, 1, 5, 5, 19, 61},
    {7, 1, 1, 3, 7, 11, 23, 15, 103},
    {7, 4, 1, 3, 7, 13, 13, 15, 69},
    {7, 7, 1, 1, 3, 13, 7, 35, 63},
    {7, 8, 1, 3, 5, 9, 1, 25, 53},
    {7, 14, 1, 3, 1, 13, 9, 35, 107},
    {7, 19, 1, 3, 1, 5, 27, 61, 31},
    {7, 21, 1, 1, 5, 11, 19, 41, 61},
    {7, 28, 1, 3, 5, 3, 3, 13, 69},
    {7, 31, 1, 1, 7, 13, 1, 19, 1},
    {7, 32, 1, 3, 7, 5, 13, 19, 59},
    {7, 37, 1, 1, 3, 9, 25, 29, 41},
    {7, 41, 1, 3, 5, 13, 23, 1, 55},
    {7, 42, 1, 3, 7, 3, 13, 59, 17},
    {7, 50, 1, 3, 1, 3, 5, 53, 69},
    {7, 55, 1, 1, 5, 5, 23, 33, 13},
    {7, 56, 1, 1, 7, 7, 1, 61, 123},
    {7, 59, 1, 1, 7, 9, 13, 61, 49},
    {7, 62, 1, 3, 3, 5, 3, 55, 33},
};
static_assert(sizeof(kJoeKuo) / sizeof(kJoeKuo[0]) == kSobolMaxDims - 1);

using Directions = std::array<std::array<uint32_t, 32>, kSobolMaxDims>;

Directions MakeDirections() {
  Directions v{};
  for (int k = 0; k < 32; ++k) v[0][k] = 1u << (31 - k);
  for (int d = 1; d < kSobolMaxDims; ++d) {
    const uint32_t* row = kJoeKuo[d - 1];
    const int s = static_cast<int>(row[0]);
    const uint32_t a = row[1];
    for (int k = 0; k < s; ++k) v[d][k] = row[2 + k] << (31 - k);
    for (int k = s; k < 32; ++k) {
      uint32_t x = v[d][k - s] ^ (v[d][k - s] >> s);
      for (int i = 1; i < s; ++i) {
        if ((a >> (s - 1 - i)) & 1u) x ^= v[d][k - i];
      }
      v[d][k] = x;
    }
  }
  return v;
}

const Directions& Table() {
  static const Directions table = MakeDirections();  // immutable after first use
  return table;
}

uint32_t ReverseBits(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

// Laine-Karras style hash acting as a random nested (Owen) permutation on reversed bits: each bit
// is flipped depending only on the bits above it.
uint32_t OwenScramble(uint32_t x, uint32_t seed) {
  x = ReverseBits(x);
  x ^= x * 0x3d20adeau;
  x += seed;
  x *= (seed >> 16) | 1u;
  x ^= x * 0x05526c56u;
  x ^= x * 0x53a22864u;
  return ReverseBits(x);
}

}  // namespace

uint32_t SobolBits(uint64_t index, int dim) {
  const auto& v = Table()[dim];
  uint32_t x = 0;
  for (int k = 0; index != 0 && k < 32; ++k, index >>= 1) {
    if (index & 1u) x ^= v[k];
  }
  return x;
}

std::vector<double> SobolPoint(uint64_t seed, uint64_t index, int dims) {
  std::vector<double> out(dims);
  for (int d = 0; d < dims; ++d) {
    if (d < kSobolMaxDims) {
      const auto scramble = static_cast<uint32_t>(DeriveSeed(seed, {static_cast<uint64_t>(d)}));
      const uint32_t x = OwenScramble(SobolBits(index, d), scramble);
      out[d] = (static_cast<double>(x) + 0.5) * 0x1.0p-32;
    } else {
      Rng rng(DeriveSeed(seed, {index, static_cast<uint64_t>(d)}));
      out[d] = rng.Uniform();
    }
  }
  return out;
}

}  // namespace sift::search

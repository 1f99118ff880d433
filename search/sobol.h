// Scrambled Sobol points (Joe & Kuo 2008 direction numbers, "new-joe-kuo-6.21201"), with Owen's
// nested uniform scrambling done by hashing (Burley, "Practical Hash-based Owen Scrambling", 2020).
// Point i is computed directly from i, so trial n can take point n after any restart.
#pragma once

#include <cstdint>
#include <vector>

namespace sift::search {

// Dimensions with Sobol direction numbers; further dimensions fall back to hashed uniforms.
constexpr int kSobolMaxDims = 37;

// The unscrambled 32-bit Sobol coordinate `dim` of point `index`.
uint32_t SobolBits(uint64_t index, int dim);

// Owen-scrambled point `index` in [0, 1)^dims; `seed` picks the scramble.
std::vector<double> SobolPoint(uint64_t seed, uint64_t index, int dims);

}  // namespace sift::search

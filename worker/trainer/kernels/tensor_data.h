// A CPU tensor's data as the trainer's hand-written kernels take it: float, or bfloat16 as its
// 16 bits (bf16_bits.h).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <type_traits>

namespace sift::worker {

inline uint16_t* Bf16Bits(const torch::Tensor& t) {
  return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
}

// T = float for a float tensor, uint16_t for a bfloat16 one.
template <typename T>
T* KernelData(const torch::Tensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.data_ptr<float>();
  } else {
    return Bf16Bits(t);
  }
}

}  // namespace sift::worker

// The NPY and NPZ readers on arbitrary bytes: one input read both as an array and as an archive.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/data/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    sift::data::ParseNpy("fuzz.npy", bytes);
  } catch (const std::runtime_error&) {
  }
  try {
    const auto members = sift::data::ReadZipMembers("fuzz.npz", bytes);
    sift::data::NpzArray("fuzz.npz", members, "x");
  } catch (const std::runtime_error&) {
  }
  return 0;
}

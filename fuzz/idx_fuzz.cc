// The IDX reader on arbitrary bytes, through gzip as the worker reads it: a bad file is a
// runtime_error naming the problem, and what it accepts is consistent with its header.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "common/data/idx.h"
#include "fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static sift::fuzz::MemFile file;
  const std::string path = file.Write(data, size);
  try {
    const sift::data::IdxArray a = sift::data::ReadIdxFile(path);
    int64_t elements = 1;
    for (int64_t d : a.dims) elements *= d;
    if (a.dims.empty() || static_cast<size_t>(elements) != a.data.size()) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}

// Checkpoint framing on arbitrary bytes: a bad file is a FramedFileError naming the problem.
#include <cstddef>
#include <cstdint>

#include "common/framed_file.h"
#include "fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static sift::fuzz::MemFile file;
  const std::string path = file.Write(data, size);
  try {
    sift::common::ReadFramedFile(path, "SIFTCKPT", 1);
  } catch (const sift::common::FramedFileError&) {
  }
  try {
    sift::common::VerifyFramedFile(path, "SIFTCKPT", 1);
  } catch (const sift::common::FramedFileError&) {
  }
  return 0;
}

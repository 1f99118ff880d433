// A command trial's checkpoint (a folder archive) on arbitrary bytes: a bad archive is a
// std::runtime_error, and no file is ever written outside the folder it unpacks into.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "worker/dir_archive.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One scratch folder per process: <root>/inside is unpacked into, <root> must stay as it was.
  static const fs::path root = [] {
    const fs::path p =
        fs::temp_directory_path() / ("sift-dir-archive-fuzz-" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  const fs::path inside = root / "inside";
  try {
    sift::worker::UnpackDirectory(std::string(reinterpret_cast<const char*>(data), size),
                                  inside.string());
  } catch (const std::runtime_error&) {
  }
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path() != inside) std::abort();  // the archive wrote beside its folder
  }
  return 0;
}

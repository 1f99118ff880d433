// TorchScript files for the trainer tests, written by examples/torchscript/export_model.py with
// Debian's python3-torch; tests skip when it is not installed.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace sift::worker::testing {

// Whether /usr/bin/python3 can import torch (checked once).
inline bool HavePythonTorch() {
  static const bool have = std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  return have;
}

inline constexpr const char* kNoPythonTorch =
    "python3-torch is not installed (scripts/install-deps.sh --examples installs it)";

// Runs export_model.export(...) for each of `calls` (e.g. "'mlp', 16, out='/tmp/x.pt'") in one
// python3: importing torch takes seconds. True on success.
inline bool ExportModels(const std::vector<std::string>& calls) {
  const char* src = std::getenv("SIFT_SOURCE_DIR");
  std::string code = "import sys; sys.path.insert(0, '" +
                     std::string(src ? src : SIFT_SOURCE_DIR_DEFAULT) +
                     "/examples/torchscript'); import export_model as e";
  for (const auto& c : calls) code += "; e.export(" + c + ")";
  return std::system(("/usr/bin/python3 -c \"" + code + "\" >/dev/null").c_str()) == 0;
}

}  // namespace sift::worker::testing

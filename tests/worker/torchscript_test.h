// TorchScript files for the trainer tests, written by examples/torchscript/export_model.py with
// Debian's python3-torch; tests skip when it is not installed.
#pragma once

#include <cstdlib>
#include <string>

namespace sift::worker::testing {

// Whether /usr/bin/python3 can import torch (checked once).
inline bool HavePythonTorch() {
  static const bool have = std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  return have;
}

inline constexpr const char* kNoPythonTorch =
    "python3-torch is not installed (scripts/install-deps.sh --examples installs it)";

// Runs export_model.py with `args` (e.g. "--model mlp --width 16") writing `out`; true on success.
inline bool ExportModel(const std::string& args, const std::string& out) {
  const char* src = std::getenv("SIFT_SOURCE_DIR");
  const std::string script =
      std::string(src ? src : SIFT_SOURCE_DIR_DEFAULT) + "/examples/torchscript/export_model.py";
  return std::system(("/usr/bin/python3 " + script + " " + args + " --out '" + out +
                      "' >/dev/null")
                         .c_str()) == 0;
}

}  // namespace sift::worker::testing

// The checkpoint file format both sides know: a framed file (common/framed_file.h) with this
// magic and version around the trainer's archive. The worker writes and reads it; the coordinator
// checks an upload's framing and payload checksum before it stores it.
#pragma once

#include <cstdint>
#include <string>

#include "common/framed_file.h"

namespace sift::common {

inline constexpr char kCheckpointMagic[] = "SIFTCKPT";
inline constexpr uint32_t kCheckpointVersion = 1;

// "" when `path` is an intact checkpoint file, else the problem ("<path>: truncated: ...").
inline std::string CheckpointFileProblem(const std::string& path) {
  try {
    VerifyFramedFile(path, kCheckpointMagic, kCheckpointVersion);
    return "";
  } catch (const FramedFileError& e) {
    return e.what();
  }
}

}  // namespace sift::common

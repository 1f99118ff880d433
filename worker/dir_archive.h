// A folder's files as one byte string, so a command trial's SIFT_CHECKPOINT_DIR travels as one
// checkpoint file: "SIFTDIR1", then per file: u32 path length, relative path, u64 size, bytes
// (little-endian). Regular files only; empty folders are not kept.
#pragma once

#include <string>

namespace sift::worker {

// Throws std::runtime_error naming the file that cannot be read.
std::string PackDirectory(const std::string& dir);

// Whether `payload` (a checkpoint file's payload) is a packed folder rather than a trainer's
// archive: a command trial's checkpoint.
bool IsPackedDirectory(const std::string& payload);

// Empties `dir` (creating it), then writes the archive's files into it. Throws
// std::runtime_error on a malformed archive or a path that would leave `dir`.
void UnpackDirectory(const std::string& archive, const std::string& dir);

}  // namespace sift::worker

// Files with a small checked header: magic, version, payload length, CRC-32 of the payload.
// Written atomically (temp file in the same directory, fsync, rename, fsync the directory), so a
// reader sees the old file or the new one, never half of one. Used by checkpoints and the data
// cache; torch-free, so the coordinator checks uploaded checkpoints with the same reader.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace sift::common {

class FramedFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `magic` is exactly 8 characters. Throws FramedFileError on any I/O failure.
void WriteFramedFile(const std::string& path, const std::string& magic, uint32_t version,
                     const std::string& payload);

// Returns the payload. Throws FramedFileError("<path>: <problem>") when the file is missing,
// truncated, has another magic or version, or its checksum does not match.
std::string ReadFramedFile(const std::string& path, const std::string& magic, uint32_t version);

// Checks what ReadFramedFile checks without keeping the payload in memory (the coordinator's check
// of an uploaded checkpoint). Throws FramedFileError naming the file and the problem.
void VerifyFramedFile(const std::string& path, const std::string& magic, uint32_t version);

// CRC-32 (zlib) of `data`, for callers that key caches by content.
uint32_t Crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace sift::common

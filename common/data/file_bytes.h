// Reading a data file's bytes: gzip (by content, not by name) is inflated transparently; and
// raw deflate for zip members. Torch-free; errors name the file.
#pragma once

#include <cstdint>
#include <string>

namespace sift::data {

// The whole file, inflated when it is gzip-compressed. Throws std::runtime_error
// "<path>: <problem>" when it cannot be read or the gzip stream is truncated or corrupt.
std::string ReadFileBytes(const std::string& path);

// Inflates a raw deflate stream (no zlib or gzip header) of exactly `expected_size` bytes out.
// `name` appears in error messages.
std::string InflateRaw(const std::string& name, const std::string& compressed,
                       uint64_t expected_size);

// Whether `path` names a regular file that can be opened for reading.
bool IsReadableFile(const std::string& path);

}  // namespace sift::data

// IDX files (the MNIST family's format), gzip-compressed: read, validate, decode. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift::data {

// An unsigned-byte IDX array: dims[0] items of dims[1] x ... bytes each.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
  int64_t count() const { return dims.empty() ? 0 : dims[0]; }
};

// Parses the decompressed bytes of an IDX file; `name` appears in error messages.
// Throws std::runtime_error("<name>: <problem>") on a bad magic, type, rank, size or length.
IdxArray ParseIdx(const std::string& name, const std::string& bytes);

// Reads a gzip-compressed (or plain: zlib reads both) IDX file. Throws std::runtime_error naming
// the file and the problem; a truncated or corrupt gzip stream is an error, not a short array.
IdxArray ReadIdxFile(const std::string& path);

}  // namespace sift::data

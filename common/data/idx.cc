#include "common/data/idx.h"

#include <stdexcept>

#include "common/data/file_bytes.h"

namespace sift::data {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr int kMaxRank = 4;
constexpr int64_t kMaxElements = int64_t{1} << 32;  // 4 GiB of pixels is surely corrupt

[[noreturn]] void IdxFail(const std::string& name, const std::string& problem) {
  throw std::runtime_error(name + ": " + problem);
}

uint32_t BigEndian32(const std::string& b, size_t at) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
}

}  // namespace

IdxArray ParseIdx(const std::string& name, const std::string& bytes) {
  if (bytes.size() < 4)
    IdxFail(name, "too short for an IDX header (" + std::to_string(bytes.size()) + " bytes)");
  if (bytes[0] != 0 || bytes[1] != 0) IdxFail(name, "bad IDX magic (first two bytes must be zero)");
  if (static_cast<uint8_t>(bytes[2]) != kUnsignedByte) {
    IdxFail(name, "unsupported IDX element type 0x" +
                      std::to_string(static_cast<uint8_t>(bytes[2])) +
                      " (want 0x08, unsigned byte)");
  }
  const int rank = static_cast<uint8_t>(bytes[3]);
  if (rank < 1 || rank > kMaxRank) IdxFail(name, "bad IDX rank " + std::to_string(rank));
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header) IdxFail(name, "truncated IDX header");
  IdxArray out;
  int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = BigEndian32(bytes, 4 + 4 * i);
    if (d <= 0) IdxFail(name, "dimension " + std::to_string(i) + " is zero");
    // Checked before multiplying: four 32-bit dimensions can overflow int64.
    if (d > kMaxElements / elements) IdxFail(name, "implausible IDX size");
    elements *= d;
    out.dims.push_back(d);
  }
  const size_t have = bytes.size() - header;
  if (have != static_cast<size_t>(elements)) {
    IdxFail(name, (have < static_cast<size_t>(elements) ? "truncated: " : "trailing bytes: ") +
                      std::string("header promises ") + std::to_string(elements) +
                      " bytes of data, file has " + std::to_string(have));
  }
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

IdxArray ReadIdxFile(const std::string& path) { return ParseIdx(path, data::ReadFileBytes(path)); }

}  // namespace sift::data

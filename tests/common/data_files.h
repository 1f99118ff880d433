// Writing small data files for tests: temporary folders, gzip, .npy arrays and zip archives
// (stored or deflated), so every reader is tested on bytes the test controls. Torch-free.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/posix_fs.h"

namespace sift::data::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sift-data-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  // POSIX, not std::filesystem: the trainer tests link LibTorch, whose exported copy of
  // remove_all crashed (common/posix_fs.h).
  ~TempDir() { common::RemoveAll(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Deflate with a gzip header (window_bits 31) or none at all (-15, as zip members use).
inline std::string Deflate(const std::string& raw, int window_bits) {
  std::string out(compressBound(raw.size()) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
inline std::string Gzip(const std::string& raw) { return Deflate(raw, 31); }

// IDX bytes (unsigned byte type) for `dims` and `data`.
inline std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((d >> shift) & 0xff));
  }
  out.append(data.begin(), data.end());
  return out;
}

// A .npy file (format 1.0) of `values` stored as `descr` ("<f4", "<f8", "|u1", "<i8", ...).
template <typename T>
std::string Npy(const std::string& descr, const std::vector<int64_t>& shape,
                const std::vector<T>& values) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return out;
}

// A zip archive of `members`, each stored (method 0) or deflated (method 8).
inline std::string Zip(const std::map<std::string, std::string>& members, bool deflate) {
  auto put = [](std::string* s, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  std::string out, central;
  for (const auto& [name, data] : members) {
    const std::string packed = deflate ? Deflate(data, -15) : data;
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const size_t offset = out.size();
    put(&out, 0x04034b50, 4);
    put(&out, 20, 2);
    put(&out, 0, 2);
    put(&out, deflate ? 8 : 0, 2);
    put(&out, 0, 4);  // time, date
    put(&out, crc, 4);
    put(&out, packed.size(), 4);
    put(&out, data.size(), 4);
    put(&out, name.size(), 2);
    put(&out, 0, 2);
    out += name + packed;
    put(&central, 0x02014b50, 4);
    put(&central, 20, 2);
    put(&central, 20, 2);
    put(&central, 0, 2);
    put(&central, deflate ? 8 : 0, 2);
    put(&central, 0, 4);
    put(&central, crc, 4);
    put(&central, packed.size(), 4);
    put(&central, data.size(), 4);
    put(&central, name.size(), 2);
    central.append(12, '\0');  // extra, comment, disk, internal and external attributes
    put(&central, offset, 4);
    central += name;
  }
  const size_t central_at = out.size();
  out += central;
  put(&out, 0x06054b50, 4);
  put(&out, 0, 4);
  put(&out, members.size(), 2);
  put(&out, members.size(), 2);
  put(&out, central.size(), 4);
  put(&out, central_at, 4);
  put(&out, 0, 2);
  return out;
}

// Expects `fn` to throw std::runtime_error whose message contains every one of `parts`.
template <typename Fn>
void ExpectError(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace sift::data::testing

#include "common/data/file_bytes.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace sift::data {

std::string ReadFileBytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error(path + ": cannot open: no such file");
  if (std::filesystem::is_directory(path, ec)) {
    throw std::runtime_error(path + ": is a directory, not a file");
  }
  // gzread passes a file that is not gzip through unchanged, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(path + ": cannot open");
  gzbuffer(f, 1 << 17);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      throw std::runtime_error(path + ": corrupt gzip stream (" + msg + ")");
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  int code = 0;
  const std::string msg = gzerror(f, &code);
  const int closed = gzclose(f);
  // A truncated stream ends without error from gzread but leaves Z_BUF_ERROR behind.
  if ((code != Z_OK && code != Z_STREAM_END) || closed != Z_OK) {
    throw std::runtime_error(path + ": truncated or corrupt gzip stream" +
                             (msg.empty() ? std::string() : " (" + msg + ")"));
  }
  return bytes;
}

std::string InflateRaw(const std::string& name, const std::string& compressed,
                       uint64_t expected_size) {
  // Deflate expands at most 1032:1, so a larger claim is a corrupt header: refused before that
  // much memory is allocated for it (found by npy_fuzz: a zip entry claiming 3.9 GB).
  if (expected_size > static_cast<uint64_t>(compressed.size()) * 1032 + 64) {
    throw std::runtime_error(name + ": corrupt deflate data (claims " +
                             std::to_string(expected_size) + " bytes from " +
                             std::to_string(compressed.size()) + " compressed)");
  }
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::runtime_error(name + ": inflateInit failed");
  std::string out(expected_size, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != expected_size) {
    throw std::runtime_error(name + ": corrupt deflate data (inflated " + std::to_string(produced) +
                             " of " + std::to_string(expected_size) + " bytes)");
  }
  return out;
}

bool IsReadableFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

}  // namespace sift::data

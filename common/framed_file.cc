#include "common/framed_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace sift::common {
namespace {

constexpr size_t kMagicSize = 8;
constexpr size_t kHeaderSize = kMagicSize + 4 + 8 + 4;  // magic, version, length, crc32

[[noreturn]] void Fail(const std::string& path, const std::string& problem) {
  throw FramedFileError(path + ": " + problem);
}

std::string ErrnoText() { return std::strerror(errno); }

template <typename T>
void PutLE(std::string* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

template <typename T>
T GetLE(const char* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      Fail(path, "write failed: " + ErrnoText());
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

uint32_t Crc32(const void* data, size_t size, uint32_t crc) {
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), size));
}

void WriteFramedFile(const std::string& path, const std::string& magic, uint32_t version,
                     const std::string& payload) {
  if (magic.size() != kMagicSize) Fail(path, "magic must be 8 bytes");
  std::string header = magic;
  PutLE<uint32_t>(&header, version);
  PutLE<uint64_t>(&header, payload.size());
  PutLE<uint32_t>(&header, Crc32(payload.data(), payload.size()));

  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(tmp, "cannot create: " + ErrnoText());
  try {
    WriteAll(fd, header.data(), header.size(), tmp);
    WriteAll(fd, payload.data(), payload.size(), tmp);
    if (::fsync(fd) != 0) Fail(tmp, "fsync failed: " + ErrnoText());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    Fail(tmp, "close failed: " + ErrnoText());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = ErrnoText();
    ::unlink(tmp.c_str());
    Fail(path, "rename failed: " + err);
  }
  // Make the rename itself durable.
  const int dir = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

namespace {

struct Header {
  uint64_t length = 0;
  uint32_t crc = 0;
};

// Checks the header's magic and version, and that the file holds exactly the promised payload.
Header CheckHeader(const std::string& path, const char* header, uint64_t file_size,
                   const std::string& magic, uint32_t version) {
  if (file_size < kHeaderSize) {
    Fail(path, "truncated: " + std::to_string(file_size) + " bytes is shorter than the header");
  }
  if (std::string(header, kMagicSize) != magic) {
    Fail(path, "bad magic (not a " + magic + " file)");
  }
  const auto got_version = GetLE<uint32_t>(header + kMagicSize);
  if (got_version != version) {
    Fail(path,
         "format version " + std::to_string(got_version) + ", expected " + std::to_string(version));
  }
  Header h;
  h.length = GetLE<uint64_t>(header + kMagicSize + 4);
  h.crc = GetLE<uint32_t>(header + kMagicSize + 12);
  const uint64_t have = file_size - kHeaderSize;
  if (have != h.length) {
    Fail(path,
         (have < h.length ? "truncated: header promises " : "trailing bytes: header promises ") +
             std::to_string(h.length) + " payload bytes, file has " + std::to_string(have));
  }
  return h;
}

}  // namespace

std::string ReadFramedFile(const std::string& path, const std::string& magic, uint32_t version) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) Fail(path, "cannot open: " + ErrnoText());
  const std::streamoff size = in.tellg();
  if (size < 0) Fail(path, "cannot determine size");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) Fail(path, "read failed");
  const Header h = CheckHeader(path, bytes.data(), bytes.size(), magic, version);
  if (Crc32(bytes.data() + kHeaderSize, h.length) != h.crc) {
    Fail(path, "checksum mismatch: the payload is corrupt");
  }
  bytes.erase(0, kHeaderSize);
  return bytes;
}

void VerifyFramedFile(const std::string& path, const std::string& magic, uint32_t version) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) Fail(path, "cannot open: " + ErrnoText());
  const std::streamoff size = in.tellg();
  if (size < 0) Fail(path, "cannot determine size");
  in.seekg(0);
  char header[kHeaderSize] = {};
  const auto head = static_cast<std::streamsize>(std::min<uint64_t>(size, kHeaderSize));
  if (!in.read(header, head)) Fail(path, "read failed");
  const Header h = CheckHeader(path, header, static_cast<uint64_t>(size), magic, version);
  std::string buf(1 << 20, '\0');
  uint32_t crc = 0;
  for (uint64_t left = h.length; left > 0;) {
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(left, buf.size()));
    if (!in.read(buf.data(), n)) Fail(path, "read failed");
    crc = Crc32(buf.data(), static_cast<size_t>(n), crc);
    left -= static_cast<uint64_t>(n);
  }
  if (crc != h.crc) Fail(path, "checksum mismatch: the payload is corrupt");
}

}  // namespace sift::common

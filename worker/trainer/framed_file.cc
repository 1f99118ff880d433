#include "worker/trainer/framed_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace sift::worker {
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

std::string ReadFramedFile(const std::string& path, const std::string& magic, uint32_t version) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) Fail(path, "cannot open: " + ErrnoText());
  const std::streamoff size = in.tellg();
  if (size < 0) Fail(path, "cannot determine size");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) Fail(path, "read failed");
  if (bytes.size() < kHeaderSize) {
    Fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the header");
  }
  if (bytes.compare(0, kMagicSize, magic) != 0) {
    Fail(path, "bad magic (not a " + magic + " file)");
  }
  const auto got_version = GetLE<uint32_t>(bytes.data() + kMagicSize);
  if (got_version != version) {
    Fail(path,
         "format version " + std::to_string(got_version) + ", expected " + std::to_string(version));
  }
  const auto length = GetLE<uint64_t>(bytes.data() + kMagicSize + 4);
  const auto crc = GetLE<uint32_t>(bytes.data() + kMagicSize + 12);
  const size_t have = bytes.size() - kHeaderSize;
  if (have != length) {
    Fail(path,
         (have < length ? "truncated: header promises " : "trailing bytes: header promises ") +
             std::to_string(length) + " payload bytes, file has " + std::to_string(have));
  }
  if (Crc32(bytes.data() + kHeaderSize, have) != crc) {
    Fail(path, "checksum mismatch: the payload is corrupt");
  }
  bytes.erase(0, kHeaderSize);
  return bytes;
}

}  // namespace sift::worker

// Readers that take a path get the fuzzer's bytes through an in-memory file (memfd), so no
// iteration touches the disk.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sift::fuzz {

class MemFile {
 public:
  MemFile() : fd_(memfd_create("sift-fuzz", 0)) {
    if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents and returns a path that opens them.
  std::string Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 ||
        (size > 0 && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))) {
      throw std::runtime_error("memfd write failed");
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

}  // namespace sift::fuzz

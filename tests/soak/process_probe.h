// What the soak samples of a running coordinator, from /proc and the filesystem.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace sift::testing::soak {

// Resident memory (VmRSS) in KiB; -1 when the process is gone.
int64_t ResidentKb(pid_t pid);
// Open file descriptors (entries of /proc/PID/fd); -1 when the process is gone.
int64_t OpenFds(pid_t pid);
// A SQLite database's bytes on disk: the file and its write-ahead log.
int64_t SqliteBytes(const std::string& path);

}  // namespace sift::testing::soak

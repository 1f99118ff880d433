#include "common/posix_fs.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sift::common {
namespace {

std::string Failure(const char* call, const std::string& path, int error) {
  return std::string(call) + " " + path + ": " + std::strerror(error);
}

// nftw's callback cannot carry state: the first failure of the current walk. One walk at a time
// per thread.
thread_local std::string* walk_error = nullptr;

int RemoveEntry(const char* path, const struct stat* /*st*/, int type, struct FTW* /*ftw*/) {
  const bool dir = type == FTW_DP;
  if ((dir ? ::rmdir(path) : ::unlink(path)) == 0 || errno == ENOENT) return 0;
  *walk_error = Failure(dir ? "rmdir" : "unlink", path, errno);
  return 1;  // stops the walk
}

}  // namespace

std::string RemoveAll(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? "" : Failure("lstat", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) return Remove(path);
  std::string error;
  walk_error = &error;
  // FTW_DEPTH: children before their directory; FTW_PHYS: links are entries, not followed;
  // FTW_MOUNT is left out so a bind mount's contents go too, as std::filesystem::remove_all does.
  const int rc = ::nftw(path.c_str(), &RemoveEntry, /*nopenfd=*/16, FTW_DEPTH | FTW_PHYS);
  walk_error = nullptr;
  if (rc != 0 && error.empty()) error = Failure("nftw", path, errno);
  return error;
}

std::string Remove(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? "" : Failure("lstat", path, errno);
  }
  const bool dir = S_ISDIR(st.st_mode);
  if ((dir ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) == 0 || errno == ENOENT) return "";
  return Failure(dir ? "rmdir" : "unlink", path, errno);
}

std::string CreateDirectories(const std::string& path) {
  if (path.empty()) return "mkdir: empty path";
  // Each prefix ending before a '/', then the whole path.
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string part = path.substr(0, end);
    if (!part.empty() && part.back() != '/' && ::mkdir(part.c_str(), 0777) != 0) {
      const int error = errno;
      struct stat st;
      if (error != EEXIST) return Failure("mkdir", part, error);
      if (::stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return "mkdir " + part + ": exists and is not a directory";
      }
    }
    if (end == std::string::npos) break;
  }
  return "";
}

std::string Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return "";
  return Failure("rename", from + " -> " + to, errno);
}

}  // namespace sift::common

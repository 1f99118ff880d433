#include "coordinator/run/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace sift::coordinator {
namespace {

namespace fs = std::filesystem;

std::string ReadTrimmed(const std::string& path, bool* ok) {
  std::ifstream in(path);
  *ok = static_cast<bool>(in);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// Writes `text` to `path` with `mode`, replacing any old file (so the mode is this one).
std::string WriteWithMode(const std::string& path, const std::string& text, mode_t mode) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return path + ": cannot write: " + std::strerror(errno);
  ::fchmod(fd, mode);  // whatever the umask
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok ? "" : path + ": cannot write: " + std::strerror(errno);
}

}  // namespace

std::string WriteRunEndpoint(const std::string& dir, const RunEndpoint& endpoint) {
  // The token first: a reader that finds the address finds the token too.
  if (std::string p = WriteWithMode(dir + "/" + kTokenFile, endpoint.token + "\n", 0600);
      !p.empty()) {
    return p;
  }
  return WriteWithMode(dir + "/" + kAddressFile, endpoint.address + "\n", 0644);
}

std::string ReadRunEndpoint(const std::string& dir, RunEndpoint* out) {
  if (!fs::is_directory(dir)) return dir + ": no such run directory";
  bool ok = false;
  out->address = ReadTrimmed(dir + "/" + kAddressFile, &ok);
  if (!ok || out->address.empty()) {
    return dir + ": no " + std::string(kAddressFile) + " here, so no `sift run` is running on it" +
           (fs::exists(dir + "/sift.db") ? " (its results: sift report --db " + dir + "/sift.db)"
                                         : "");
  }
  out->token = ReadTrimmed(dir + "/" + kTokenFile, &ok);
  if (!ok) return dir + "/" + kTokenFile + ": cannot read (only its owner may)";
  return "";
}

void RemoveRunEndpoint(const std::string& dir) {
  std::error_code ec;
  fs::remove(dir + "/" + kAddressFile, ec);
  fs::remove(dir + "/" + kTokenFile, ec);
}

}  // namespace sift::coordinator

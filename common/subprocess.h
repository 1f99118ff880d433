// Starting a child process: the one fork+exec of the coordinator, the worker and the tests.
// An exec that fails is reported to the caller ("cannot run X: No such file or directory"), not
// left to the child's exit code 127.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sift::common {

// Where one of the child's standard streams goes.
struct Stdio {
  enum class Kind { kInherit, kClose, kNull, kFile, kFd, kStdout };
  Kind kind = Kind::kInherit;
  std::string path;    // kFile: opened by the parent before the fork (an output created 0644)
  bool append = true;  // kFile: append, else truncate
  int fd = -1;         // kFd: the caller's descriptor, which stays the caller's to close

  static Stdio Inherit() { return {}; }
  static Stdio Close() { return {Kind::kClose, "", true, -1}; }
  static Stdio Null() { return {Kind::kNull, "", true, -1}; }
  static Stdio File(std::string path, bool append) {
    return {Kind::kFile, std::move(path), append, -1};
  }
  static Stdio Fd(int fd) { return {Kind::kFd, "", true, fd}; }
  static Stdio ToStdout() { return {Kind::kStdout, "", true, -1}; }  // stderr only
};

struct SpawnOptions {
  std::vector<std::string> argv;                // argv[0] is the program
  std::optional<std::vector<std::string>> env;  // "NAME=value" each; unset: ours
  bool search_path = false;                     // find argv[0] on $PATH when it has no '/'
  bool own_group = false;          // a process group of its own (pgid == pid), set by both sides
  bool die_with_parent = false;    // SIGKILL when the spawning thread ends (PR_SET_PDEATHSIG)
  bool clear_signal_mask = false;  // start with no signal blocked
  std::string dir;                 // working directory; empty: ours
  Stdio in, out, err;
};

// Starts the child and returns its pid, or -1 with errno set and *error one line naming what
// failed: "cannot run X: ...", "cannot enter DIR: ...", "cannot open PATH: ...", "fork: ...".
pid_t Spawn(const SpawnOptions& options, std::string* error);

// waitpid retried on EINTR: the pid once it has ended (*status set), -1 (errno) if not our child.
pid_t Wait(pid_t pid, int* status);
// The same without blocking: 0 while it is still running.
pid_t TryWait(pid_t pid, int* status);

// Our environment as "NAME=value" strings, to edit into SpawnOptions::env.
std::vector<std::string> CurrentEnvironment();

}  // namespace sift::common

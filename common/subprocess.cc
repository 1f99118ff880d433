#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace sift::common {
namespace {

// What the child writes to the parent through the CLOEXEC pipe when it cannot go on.
struct ChildFailure {
  enum Step : int { kExec, kChdir, kDup } step;
  int error;
};

std::string Describe(const ChildFailure& f, const SpawnOptions& o) {
  const std::string why = std::strerror(f.error);
  switch (f.step) {
    case ChildFailure::kChdir:
      return "cannot enter " + o.dir + ": " + why;
    case ChildFailure::kDup:
      return "cannot run " + o.argv[0] + ": dup2: " + why;
    default:
      return "cannot run " + o.argv[0] + ": " + why;
  }
}

// The descriptor the child's stream `s` comes from, opened here (CLOEXEC) when it is a file;
// -1 when there is none (inherit, close, stderr-to-stdout). *opened: ours to close. "" or why not.
std::string SourceFd(const Stdio& s, const std::string& program, const char* name, int flags,
                     std::vector<int>* opened, int* fd) {
  *fd = -1;
  std::string path;
  switch (s.kind) {
    case Stdio::Kind::kFd:
      if (s.fd < 0) return "cannot run " + program + ": no descriptor for its " + name;
      *fd = s.fd;
      return "";
    case Stdio::Kind::kNull:
      path = "/dev/null";
      break;
    case Stdio::Kind::kFile:
      path = s.path;
      if (flags != O_RDONLY) flags |= O_CREAT | (s.append ? O_APPEND : O_TRUNC);
      break;
    default:
      return "";
  }
  *fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (*fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  opened->push_back(*fd);
  return "";
}

// Child side, between fork and exec: async-signal-safe calls only.
[[noreturn]] void Fail(int report_fd, ChildFailure::Step step) {
  const ChildFailure f{step, errno};
  ssize_t n;
  do {
    n = write(report_fd, &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  _exit(127);
}

[[noreturn]] void Child(const SpawnOptions& o, pid_t parent, int report_fd, int (&src)[3],
                        char** argv, char** envp) {
  if (o.clear_signal_mask) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  if (o.own_group) setpgid(0, 0);
  if (o.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before the line above
  }
  // Sources below 3 move up first, so no dup2 below overwrites one still to be read.
  if (report_fd < 3) report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
  for (int& fd : src) {
    if (fd >= 0 && fd < 3 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
      Fail(report_fd, ChildFailure::kDup);
    }
  }
  const Stdio* streams[3] = {&o.in, &o.out, &o.err};
  for (int target = 0; target < 3; ++target) {
    const Stdio::Kind kind = streams[target]->kind;
    if (kind == Stdio::Kind::kClose) close(target);
    if (kind == Stdio::Kind::kStdout && dup2(STDOUT_FILENO, target) < 0) {
      Fail(report_fd, ChildFailure::kDup);
    }
    if (src[target] >= 0 && dup2(src[target], target) < 0) Fail(report_fd, ChildFailure::kDup);
  }
  if (!o.dir.empty() && chdir(o.dir.c_str()) != 0) Fail(report_fd, ChildFailure::kChdir);
  if (o.search_path) {
    execvpe(argv[0], argv, envp);
  } else {
    execve(argv[0], argv, envp);
  }
  Fail(report_fd, ChildFailure::kExec);
}

}  // namespace

pid_t Spawn(const SpawnOptions& o, std::string* error) {
  error->clear();
  if (o.argv.empty() || o.argv[0].empty()) {
    *error = "cannot run a command without a program";
    errno = EINVAL;
    return -1;
  }
  std::vector<int> opened;
  auto close_opened = [&] {
    const int saved = errno;
    for (int fd : opened) close(fd);
    errno = saved;
  };
  int src[3];
  const Stdio* streams[3] = {&o.in, &o.out, &o.err};
  const char* names[3] = {"stdin", "stdout", "stderr"};
  for (int i = 0; i < 3; ++i) {
    errno = EINVAL;  // what a refusal without a failed call reports
    *error =
        SourceFd(*streams[i], o.argv[0], names[i], i == 0 ? O_RDONLY : O_WRONLY, &opened, &src[i]);
    if (!error->empty()) {
      close_opened();
      return -1;
    }
  }
  // Everything the child touches is built before the fork.
  std::vector<std::string> argv_copy = o.argv,
                           env_copy = o.env.value_or(std::vector<std::string>{});
  std::vector<char*> argv, envp;
  for (auto& s : argv_copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_copy) envp.push_back(s.data());
  envp.push_back(nullptr);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *error = std::string("cannot run " + o.argv[0] + ": pipe: ") + std::strerror(errno);
    close_opened();
    return -1;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) Child(o, parent, report[1], src, argv.data(), o.env ? envp.data() : environ);
  const int fork_errno = errno;
  close(report[1]);
  close_opened();
  if (pid < 0) {
    close(report[0]);
    *error = std::string("fork: ") + std::strerror(fork_errno);
    errno = fork_errno;
    return -1;
  }
  if (o.own_group) setpgid(pid, pid);  // here too, so no signal to the group races the child
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report[0], &failure, sizeof failure);  // EOF (0) once the exec succeeded
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n != static_cast<ssize_t>(sizeof failure)) return pid;
  int status = 0;
  Wait(pid, &status);
  *error = Describe(failure, o);
  errno = failure.error;
  return -1;
}

pid_t Wait(pid_t pid, int* status) {
  pid_t r;
  do {
    r = waitpid(pid, status, 0);
  } while (r < 0 && errno == EINTR);
  return r;
}

pid_t TryWait(pid_t pid, int* status) {
  pid_t r;
  do {
    r = waitpid(pid, status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  return r;
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace sift::common

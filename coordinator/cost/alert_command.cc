#include "coordinator/cost/alert_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/subprocess.h"

namespace sift::coordinator {
namespace {

constexpr size_t kMaxOutput = 4096;

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string RunWithInput(const std::vector<std::string>& argv, const std::string& input,
                         double timeout_s, std::string* output) {
  output->clear();
  if (argv.empty()) return "no command";
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return std::string("cannot start: pipe: ") + strerror(errno);
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return std::string("cannot start: pipe: ") + strerror(errno);
  }
  common::SpawnOptions o;
  o.argv = argv;
  o.search_path = true;
  o.in = common::Stdio::Fd(in[0]);
  o.out = common::Stdio::Fd(out[1]);
  o.err = common::Stdio::ToStdout();
  // A group of its own, so a timeout kills what a shell command started too (curl under sh).
  o.own_group = true;
  o.clear_signal_mask = true;
  std::string error;
  const pid_t pid = common::Spawn(o, &error);
  const int spawn_errno = errno;
  close(in[0]);
  close(out[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    return "cannot start '" + argv[0] + "': " + strerror(spawn_errno);
  }
  // The facts are written as the command reads them, never blocking: a command that does not
  // read, or exits first, cannot stall this thread past its timeout. Its early exit makes the
  // write fail with EPIPE, not raise SIGPIPE (blocked here, and a pending one discarded).
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  }
  const double deadline = Seconds() + timeout_s;
  int status = 0;
  bool exited = false, timed_out = false;
  char buf[1024];
  while (!exited) {
    if (in_fd >= 0) {
      const ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (written == input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close(in_fd);
        in_fd = -1;
      }
    }
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, in_fd >= 0 ? 5 : 50) > 0) {
      const ssize_t n = read(out[0], buf, sizeof buf);
      if (n > 0 && output->size() < kMaxOutput) {
        output->append(buf, std::min(static_cast<size_t>(n), kMaxOutput - output->size()));
      }
    }
    const pid_t w = common::TryWait(pid, &status);
    if (w == pid || w < 0) {
      exited = true;
    } else if (Seconds() > deadline) {
      kill(-pid, SIGKILL);
      common::Wait(pid, &status);
      exited = timed_out = true;
    }
  }
  if (in_fd >= 0) close(in_fd);
  const timespec zero{0, 0};
  while (sigtimedwait(&pipe_only, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  close(out[0]);
  while (!output->empty() && (output->back() == '\n' || output->back() == '\r')) output->pop_back();
  if (timed_out) return fmt::format("killed after {:g} s (timeout)", timeout_s);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "ended abnormally";
}

AlertCommands::~AlertCommands() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (!jobs_.empty()) spdlog::info("waiting for {} alert command(s) to finish", jobs_.size());
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AlertCommands::Run(std::vector<std::string> argv, std::string input, double timeout_s,
                        std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back({std::move(argv), std::move(input), timeout_s, std::move(what)});
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

void AlertCommands::Loop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::string output;
    const std::string problem = RunWithInput(job.argv, job.input, job.timeout_s, &output);
    if (problem.empty()) {
      spdlog::info("alert command for {} ran{}", job.what, output.empty() ? "" : ": " + output);
    } else {
      spdlog::warn("alert command for {} failed: {}{}", job.what, problem,
                   output.empty() ? "" : "; it wrote: " + output);
    }
  }
}

}  // namespace sift::coordinator

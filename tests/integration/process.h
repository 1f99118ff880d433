// Child processes for integration tests: spawn with captured output, signal, wait.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace sift::testing {

class Process {
 public:
  // Starts argv with stdout+stderr to `log_path`; `own_group`: in a process group of its own, as
  // a shell starts a foreground job (see SignalGroup).
  Process(const std::vector<std::string>& argv, const std::string& log_path,
          bool own_group = false);
  ~Process();  // SIGKILLs a still-running child
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool Running();
  void Signal(int sig);
  // To its whole process group, as a terminal's Ctrl-C (SIGINT) or hang-up (SIGHUP) arrives.
  void SignalGroup(int sig);
  // Waits up to timeout_s; returns the exit code, or -1 (still running) / 128+signal.
  int Wait(double timeout_s);
  std::string Log() const;

 private:
  pid_t pid_ = 0;
  bool exited_ = false;
  int code_ = -1;
  std::string log_path_;
};

// Runs argv to completion (with a timeout); returns the exit code and fills *output.
int RunCommand(const std::vector<std::string>& argv, std::string* output, double timeout_s = 120);

// Starts `sift coordinator --listen 127.0.0.1:0 --db DB --prices <examples> EXTRA...` logging to
// `log_path` and returns the port it prints, or 0 (with a test failure) if it did not start.
int StartSiftCoordinator(std::unique_ptr<Process>* out, const std::string& db,
                         const std::vector<std::string>& extra, const std::string& log_path);

// `sift-worker` joining `address` as a one-thread worker named `name`, with its cache under `dir`,
// then `extra`.
std::vector<std::string> WorkerBase(const std::string& address, const std::string& name,
                                    const std::string& dir,
                                    const std::vector<std::string>& extra = {});
// WorkerBase as a c6i.large worker in `market`; a `preemption` above 0 simulates reclaims at that
// rate from `seed`.
std::vector<std::string> WorkerArgv(const std::string& address, const std::string& name,
                                    const std::string& market, const std::string& dir,
                                    double preemption = 0, int seed = 0);

// The build's bin directory (sift, sift-worker), and a fresh temporary directory (one root per
// process, removed at exit when every test passed).
std::string BinDir();
std::string SourceDir();
std::string TempDir(const std::string& name);

// The whole file (empty when it cannot be read).
std::string Read(const std::string& path);

}  // namespace sift::testing

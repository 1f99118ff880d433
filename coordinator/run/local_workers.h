// Starts and stops local sift-worker processes for the embedded run.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace sift::coordinator {

struct WorkerProcess {
  pid_t pid = 0;
  int slot = 0;
  std::string log_path;
  bool running = false;
  int exit_status = 0;
};

class LocalWorkers {
 public:
  // Spawns `argv` in a process group of its own, with stdout/stderr to `log_path` and `env`
  // overriding the inherited variables.
  // Throws std::runtime_error naming the binary when it cannot start.
  void Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
             const std::string& log_path, int slot = 0);
  // Reaps exited workers without blocking; returns how many are still running.
  int Poll();
  // Slots of the workers that exited since the last call.
  std::vector<int> TakeExited();
  // Sends `sig` to every running worker.
  void SignalAll(int sig);
  // Waits up to `grace_s` for all to exit, then SIGTERM, then SIGKILL.
  void StopAll(double grace_s);
  const std::vector<WorkerProcess>& processes() const { return processes_; }

 private:
  std::vector<WorkerProcess> processes_;
  std::vector<int> exited_;
};

// Environment for worker processes: threads for LibTorch/OpenMP/OpenBLAS and the allocator.
std::map<std::string, std::string> WorkerEnvironment(int threads);

}  // namespace sift::coordinator

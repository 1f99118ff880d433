#include "coordinator/run/local_workers.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "common/subprocess.h"

namespace sift::coordinator {

namespace {

bool CpuHasFlag(const std::string& flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0)
      return (line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

}  // namespace

std::map<std::string, std::string> WorkerEnvironment(int threads) {
  std::map<std::string, std::string> env;
  const std::string t = std::to_string(threads);
  // One pool size for every runtime in the process, so workers never oversubscribe the cores.
  env["OMP_NUM_THREADS"] = t;
  env["OPENBLAS_NUM_THREADS"] = t;
  env["SIFT_THREADS"] = t;
  // glibc malloc returns freed activation buffers to the kernel and page-faults them back on
  // every step; jemalloc with decay disabled keeps them (see bench/worker/README.md).
  const char* jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
  if (access(jemalloc, R_OK) == 0 && getenv("SIFT_NO_JEMALLOC") == nullptr) {
    const char* preload = getenv("LD_PRELOAD");
    env["LD_PRELOAD"] = preload && *preload ? std::string(preload) + ":" + jemalloc : jemalloc;
    env["MALLOC_CONF"] = "dirty_decay_ms:-1,muzzy_decay_ms:-1,background_thread:false";
  }
  // OpenBLAS picks AVX2 kernels when the environment pins an older core type; on AVX-512 CPUs
  // its SkylakeX kernels are ~1.5x faster for the MLPs' GEMMs (bench/worker/README.md).
  if (CpuHasFlag("avx512f") && getenv("SIFT_KEEP_OPENBLAS_CORETYPE") == nullptr) {
    env["OPENBLAS_CORETYPE"] = "SkylakeX";
  }
  return env;
}

void LocalWorkers::Spawn(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, const std::string& log_path,
                         int slot) {
  std::map<std::string, std::string> merged;
  for (const std::string& e : common::CurrentEnvironment()) {
    const size_t eq = e.find('=');
    if (eq != std::string::npos) merged[e.substr(0, eq)] = e.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  common::SpawnOptions o;
  o.argv = argv;
  o.env.emplace();
  for (const auto& [k, v] : merged) o.env->push_back(k + "=" + v);
  o.in = common::Stdio::Close();
  o.out = common::Stdio::File(log_path, /*append=*/true);
  o.err = common::Stdio::ToStdout();
  // Its own process group: a Ctrl-C or a hang-up at the terminal reaches `sift run` alone, which
  // pauses the study before it stops the workers, so their hand-backs are not preemptions.
  o.own_group = true;
  std::string error;
  const pid_t pid = common::Spawn(o, &error);
  if (pid < 0) throw std::runtime_error("cannot start worker: " + error);
  processes_.push_back({pid, slot, log_path, true, 0});
}

int LocalWorkers::Poll() {
  int running = 0;
  for (auto& p : processes_) {
    if (!p.running) continue;
    int status = 0;
    if (common::TryWait(p.pid, &status) == p.pid) {
      p.running = false;
      p.exit_status = status;
      exited_.push_back(p.slot);
    } else {
      ++running;
    }
  }
  return running;
}

std::vector<int> LocalWorkers::TakeExited() {
  std::vector<int> out;
  out.swap(exited_);
  return out;
}

void LocalWorkers::SignalAll(int sig) {
  Poll();
  for (auto& p : processes_) {
    if (p.running) kill(p.pid, sig);
  }
}

void LocalWorkers::StopAll(double grace_s) {
  using Clock = std::chrono::steady_clock;
  auto wait_until = [&](Clock::time_point deadline) {
    while (Poll() > 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  wait_until(Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000)));
  for (int sig : {SIGTERM, SIGKILL}) {
    if (Poll() == 0) return;
    for (auto& p : processes_) {
      if (p.running) kill(p.pid, sig);
    }
    wait_until(Clock::now() + std::chrono::seconds(5));
  }
}

}  // namespace sift::coordinator

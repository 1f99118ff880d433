#include "tests/integration/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/subprocess.h"
#include "tests/temp_cleanup.h"

namespace sift::testing {

Process::Process(const std::vector<std::string>& argv, const std::string& log_path, bool own_group)
    : log_path_(log_path) {
  common::SpawnOptions o;
  o.argv = argv;
  o.out = common::Stdio::File(log_path, /*append=*/false);
  o.err = common::Stdio::ToStdout();
  o.own_group = own_group;
  std::string error;
  pid_ = common::Spawn(o, &error);
  if (pid_ < 0) throw std::runtime_error(error);
}

Process::~Process() {
  if (Running()) {
    kill(pid_, SIGKILL);
    Wait(5);
  }
}

bool Process::Running() {
  if (exited_) return false;
  int status = 0;
  if (common::TryWait(pid_, &status) == pid_) {
    exited_ = true;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return !exited_;
}

void Process::Signal(int sig) {
  if (Running()) kill(pid_, sig);
}

void Process::SignalGroup(int sig) {
  if (Running()) kill(-pid_, sig);
}

int Process::Wait(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exited_ ? code_ : -1;
}

std::string Process::Log() const {
  std::ifstream f(log_path_);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int RunCommand(const std::vector<std::string>& argv, std::string* output, double timeout_s) {
  static int counter = 0;
  const std::string log = TempDir("cmd") + "/out-" + std::to_string(counter++) + ".log";
  Process p(argv, log);
  const int code = p.Wait(timeout_s);
  *output = p.Log();
  return code;
}

int StartSiftCoordinator(std::unique_ptr<Process>* out, const std::string& db,
                         const std::vector<std::string>& extra, const std::string& log_path) {
  std::vector<std::string> argv = {BinDir() + "/sift",
                                   "coordinator",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--db",
                                   db,
                                   "--prices",
                                   SourceDir() + "/examples/prices.json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  *out = std::make_unique<Process>(argv, log_path);
  const std::regex port_re("listening on ([0-9]+)");
  for (int i = 0; i < 200 && (*out)->Running(); ++i) {
    std::smatch m;
    const std::string log = (*out)->Log();
    if (std::regex_search(log, m, port_re)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "coordinator did not start:\n" << (*out)->Log();
  return 0;
}

std::vector<std::string> WorkerBase(const std::string& address, const std::string& name,
                                    const std::string& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinDir() + "/sift-worker",
                                   "--coordinator",
                                   address,
                                   "--name",
                                   name,
                                   "--threads",
                                   "1",
                                   "--cache-dir",
                                   dir + "/cache"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::vector<std::string> WorkerArgv(const std::string& address, const std::string& name,
                                    const std::string& market, const std::string& dir,
                                    double preemption, int seed) {
  std::vector<std::string> argv =
      WorkerBase(address, name, dir, {"--instance-type", "c6i.large", "--market", market});
  if (preemption > 0) {
    std::ostringstream rate;
    rate << preemption;
    argv.insert(argv.end(),
                {"--simulate-preemption", rate.str(), "--preemption-seed", std::to_string(seed)});
  }
  return argv;
}

std::string BinDir() {
  const char* b = getenv("SIFT_BUILD_DIR");
  return std::string(b ? b : SIFT_BUILD_DIR_DEFAULT) + "/bin";
}

std::string SourceDir() {
  const char* s = getenv("SIFT_SOURCE_DIR");
  return s ? s : SIFT_SOURCE_DIR_DEFAULT;
}

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string TempDir(const std::string& name) {
  // One new folder per test process (mkdtemp), not one named by the pid: pids wrap at 32,768
  // here, and a test whose pid an earlier process had used found that one's finished study in
  // its folder (EmbeddedRun.QuickExample... failed a CI run that way).
  static const std::filesystem::path root = [] {
    const std::string base = "sift-it-" + std::to_string(getpid()) + "-XXXXXX";
    std::string pattern = (std::filesystem::temp_directory_path() / base).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    RemoveAtExitIfPassed(pattern);
    // The temp folder of every process the test starts from here on: a worker it kills leaves
    // its scratch folder there (worker/scratch_dirs.h), not in /tmp, and it goes with the rest.
    const std::string tmp = pattern + "/tmp";
    std::filesystem::create_directories(tmp);
    setenv("TMPDIR", tmp.c_str(), 1);
    return std::filesystem::path(pattern);
  }();
  const auto dir = root / name;
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace sift::testing

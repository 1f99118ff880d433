#include "common/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/posix_fs.h"

namespace sift::common {
namespace subprocess_test {

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `options` to its end with stdout (unless set) into a pipe; returns what it printed.
std::string Output(SpawnOptions options, int* status = nullptr) {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  if (options.out.kind == Stdio::Kind::kInherit) options.out = Stdio::Fd(p[1]);
  std::string error;
  const pid_t pid = Spawn(options, &error);
  close(p[1]);
  EXPECT_GT(pid, 0) << error;
  const std::string out = ReadAll(p[0]);
  close(p[0]);
  int st = 0;
  if (pid > 0) {
    EXPECT_EQ(Wait(pid, &st), pid);
  }
  if (status) *status = st;
  return out;
}

SpawnOptions Shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

bool Gone(pid_t pid) {  // ended: no such process, or a zombie nobody has reaped yet
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/sift-subprocess-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { EXPECT_EQ(RemoveAll(dir_), ""); }
  std::string dir_;
};

TEST_F(SubprocessTest, ExitStatusComesBack) {
  int status = 0;
  Output(Shell("exit 3"), &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  Output(Shell("kill -TERM $$"), &status);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST_F(SubprocessTest, TryWaitSaysRunningThenEnded) {
  SpawnOptions o;
  o.argv = {"/bin/sleep", "30"};
  std::string error;
  const pid_t pid = Spawn(o, &error);
  ASSERT_GT(pid, 0) << error;
  int status = 0;
  EXPECT_EQ(TryWait(pid, &status), 0);
  kill(pid, SIGKILL);
  EXPECT_EQ(Wait(pid, &status), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(TryWait(pid, &status), -1);  // reaped: no longer our child
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(SubprocessTest, AMissingProgramIsNamedInTheError) {
  SpawnOptions o;
  o.argv = {"/no/such/program", "x"};
  std::string error;
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(error, "cannot run /no/such/program: No such file or directory");

  o.argv = {"no-such-program-sift-test"};
  o.search_path = true;
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(error, "cannot run no-such-program-sift-test: No such file or directory");

  o.argv = {"sh", "-c", "exit 0"};  // found on $PATH only when asked to search
  const pid_t pid = Spawn(o, &error);
  EXPECT_GT(pid, 0) << error;
  int status;
  if (pid > 0) Wait(pid, &status);
  o.search_path = false;
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(error, "cannot run sh: No such file or directory");
}

TEST_F(SubprocessTest, AMissingFolderOrLogIsNamed) {
  SpawnOptions o = Shell("exit 0");
  o.dir = "/nonexistent-sift";
  std::string error;
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(error, "cannot enter /nonexistent-sift: No such file or directory");
  o.dir = "";
  o.out = Stdio::File("/nonexistent-sift/out.log", true);
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(error, "cannot open /nonexistent-sift/out.log: No such file or directory");
  EXPECT_EQ(errno, ENOENT);
  o.out = Stdio::Fd(-1);
  EXPECT_EQ(Spawn(o, &error), -1);
  EXPECT_EQ(error, "cannot run /bin/sh: no descriptor for its stdout");
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(SubprocessTest, RunsInTheGivenFolder) {
  SpawnOptions o = Shell("pwd -P");
  o.dir = dir_;
  EXPECT_EQ(Output(o), dir_ + "\n");
}

TEST_F(SubprocessTest, StdoutToAFileTruncatedOrAppended) {
  const std::string log = dir_ + "/out.log";
  std::ofstream(log) << "old\n";
  SpawnOptions o = Shell("echo one");
  o.out = Stdio::File(log, /*append=*/false);
  Output(o);
  EXPECT_EQ(ReadFile(log), "one\n");
  o = Shell("echo two");
  o.out = Stdio::File(log, /*append=*/true);
  Output(o);
  EXPECT_EQ(ReadFile(log), "one\ntwo\n");
}

TEST_F(SubprocessTest, StdoutToAPipeAndStderrApart) {
  const std::string err_log = dir_ + "/err.log";
  SpawnOptions o = Shell("echo out; echo err >&2");
  o.err = Stdio::File(err_log, true);
  EXPECT_EQ(Output(o), "out\n");
  EXPECT_EQ(ReadFile(err_log), "err\n");
}

TEST_F(SubprocessTest, StderrToStdout) {
  SpawnOptions o = Shell("echo out; echo err >&2");
  o.err = Stdio::ToStdout();
  EXPECT_EQ(Output(o), "out\nerr\n");
}

TEST_F(SubprocessTest, StdinFromDevNullOrAFileOrClosed) {
  SpawnOptions o = Shell("readlink /proc/self/fd/0; cat");
  o.in = Stdio::Null();
  EXPECT_EQ(Output(o), "/dev/null\n");
  const std::string input = dir_ + "/in.txt";
  std::ofstream(input) << "facts\n";
  o.in = Stdio::File(input, false);
  EXPECT_EQ(Output(o), input + "\nfacts\n");
  o = Shell("test -e /proc/self/fd/0 && echo open || echo closed");
  o.in = Stdio::Close();
  EXPECT_EQ(Output(o), "closed\n");
}

TEST_F(SubprocessTest, OwnProcessGroup) {
  SpawnOptions o;
  o.argv = {"/bin/sleep", "30"};
  std::string error;
  const pid_t inherits = Spawn(o, &error);
  ASSERT_GT(inherits, 0) << error;
  o.own_group = true;
  const pid_t own = Spawn(o, &error);
  ASSERT_GT(own, 0) << error;
  EXPECT_EQ(getpgid(own), own);  // set by the parent before Spawn returns
  EXPECT_EQ(getpgid(inherits), getpgrp());
  int status;
  for (pid_t pid : {inherits, own}) {
    kill(pid, SIGKILL);
    Wait(pid, &status);
  }
}

TEST_F(SubprocessTest, EnvironmentReplacedOrInherited) {
  SpawnOptions o;
  o.argv = {"/usr/bin/env"};
  o.env = std::vector<std::string>{"ONLY=1", "TWO=x y"};
  EXPECT_EQ(Output(o), "ONLY=1\nTWO=x y\n");
  ASSERT_EQ(setenv("SIFT_SUBPROCESS_TEST", "inherited", 1), 0);
  o.env.reset();
  EXPECT_NE(Output(o).find("SIFT_SUBPROCESS_TEST=inherited\n"), std::string::npos);
  bool found = false;
  for (const auto& e : CurrentEnvironment()) found |= e == "SIFT_SUBPROCESS_TEST=inherited";
  EXPECT_TRUE(found);
  unsetenv("SIFT_SUBPROCESS_TEST");
}

TEST_F(SubprocessTest, SignalMaskClearedOnRequest) {
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
  SpawnOptions o;  // not under sh, which clears the mask itself
  o.argv = {"/bin/grep", "SigBlk", "/proc/self/status"};
  const std::string kept = Output(o);
  o.clear_signal_mask = true;
  const std::string cleared = Output(o);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_NE(kept.find("0000000000000200"), std::string::npos) << kept;  // bit 10, SIGUSR1
  EXPECT_NE(cleared.find("0000000000000000"), std::string::npos) << cleared;
}

// A helper process (forked here) spawns a sleeper and reports its pid; the helper is then killed.
// With die_with_parent the sleeper dies with it; without, it lives on (and is killed here).
pid_t SleeperOfAKilledHelper(bool die_with_parent) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  const pid_t helper = fork();
  if (helper == 0) {
    close(p[0]);
    SpawnOptions o;
    o.argv = {"/bin/sleep", "30"};
    o.die_with_parent = die_with_parent;
    std::string error;
    const pid_t sleeper = Spawn(o, &error);
    if (write(p[1], &sleeper, sizeof sleeper) != sizeof sleeper) _exit(1);
    pause();
    _exit(0);
  }
  close(p[1]);
  pid_t sleeper = -1;
  EXPECT_EQ(read(p[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  close(p[0]);
  EXPECT_GT(sleeper, 0);
  kill(helper, SIGKILL);
  int status;
  Wait(helper, &status);
  return sleeper;
}

TEST_F(SubprocessTest, DiesWithItsParent) {
  const pid_t sleeper = SleeperOfAKilledHelper(true);
  ASSERT_GT(sleeper, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!Gone(sleeper) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(Gone(sleeper));
  if (!Gone(sleeper)) kill(sleeper, SIGKILL);
}

TEST_F(SubprocessTest, OutlivesItsParentUnlessAsked) {
  const pid_t sleeper = SleeperOfAKilledHelper(false);
  ASSERT_GT(sleeper, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(Gone(sleeper));
  kill(sleeper, SIGKILL);
}

}  // namespace subprocess_test
}  // namespace sift::common

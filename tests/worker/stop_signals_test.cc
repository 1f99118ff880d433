// sift-worker's SIGTERM against the oneDNN sgemm the trainer runs (worker/stop_signals.h): a
// signal handler that interrupts the computing thread can find its frame written on heap memory,
// because oneDNN's kernels move the stack pointer into a heap buffer. Each case runs in a child
// process (a death test) that multiplies the integration test's first MLP layer (32 x 784 by
// 784 x 256) in a loop while another thread sends the process SIGTERM every 200 microseconds.
#include "worker/stop_signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "worker/trainer/kernels/sgemm.h"

namespace sift::worker {
namespace stop_signals_test {

constexpr int kSignals = 2000;
constexpr int kOffStack = 3;   // a handler ran on the computing thread outside its stack
constexpr int kNoneTaken = 4;  // the listener never saw a SIGTERM

pthread_t g_computing;
uintptr_t g_stack_low = 0, g_stack_high = 0;

// The handler the worker installed before stop_signals.h (it only stored an atomic): here it
// also checks where the kernel put its frame. Async-signal-safe.
void Probe(int) {
  char here;
  const auto at = reinterpret_cast<uintptr_t>(&here);
  if (pthread_equal(pthread_self(), g_computing) && (at < g_stack_low || at >= g_stack_high)) {
    _exit(kOffStack);
  }
}

// The child's body: never returns. With `stop_signals` the worker's StopSignals takes SIGTERM.
[[noreturn]] void SgemmUnderSigterm(bool stop_signals) {
  g_computing = pthread_self();
  pthread_attr_t attr;
  void* low = nullptr;
  size_t size = 0;
  pthread_getattr_np(g_computing, &attr);
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  g_stack_low = reinterpret_cast<uintptr_t>(low);
  g_stack_high = g_stack_low + size;
  signal(SIGTERM, Probe);

  std::atomic<int> taken{0};
  std::optional<StopSignals> signals;
  if (stop_signals) signals.emplace([&](int) { ++taken; });
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    // Without StopSignals only the computing thread may take the signal, as in a worker whose
    // other threads sleep.
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    for (int i = 0; i < kSignals; ++i) {
      kill(getpid(), SIGTERM);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    sent = true;
  });
  torch::set_num_threads(1);  // the integration test's worker: --threads 1
  const torch::Tensor a = torch::randn({32, 784});
  const torch::Tensor b = torch::randn({256, 784});
  torch::Tensor c = torch::empty({32, 256});
  while (!sent) Sgemm(/*trans_a=*/false, /*trans_b=*/true, a, b, c);
  sender.join();
  if (!stop_signals) _exit(0);
  for (int i = 0; i < 5000 && taken == 0; ++i) {  // 5 s: a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  _exit(taken > 0 ? 0 : kNoneTaken);
}

// The cause, shown on this machine: with a plain handler the kernel writes the handler's frame
// below oneDNN's stack pointer, outside the thread's stack. Skipped where Sgemm does not run
// oneDNN, or where this oneDNN kept its stack for all the signals.
TEST(StopSignalsTest, AHandlerInterruptingOneDnnSgemmRunsOffTheThreadsStack) {
  if (!SgemmUsesOneDnn()) GTEST_SKIP() << "Sgemm runs ATen here, not oneDNN";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  static int status = -1;
  EXPECT_EXIT(
      SgemmUnderSigterm(/*stop_signals=*/false),
      [](int s) {
        status = s;
        return true;
      },
      "");
  // A frame that reached unmapped memory, or corrupted the heap before the probe ran, kills the
  // child instead: the same hazard.
  if (WIFSIGNALED(status)) {
    EXPECT_TRUE(WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS ||
                WTERMSIG(status) == SIGABRT)
        << "child killed by signal " << WTERMSIG(status);
    return;
  }
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  if (WEXITSTATUS(status) == 0) {
    GTEST_SKIP() << "no handler ran off the stack in " << kSignals << " signals";
  }
  EXPECT_EQ(WEXITSTATUS(status), kOffStack);
}

// The worker's way: SIGTERM blocked in every thread and taken by StopSignals' own thread, so no
// handler ever interrupts the computing thread, and every stop request still arrives.
TEST(StopSignalsTest, SigtermReachesTheListenerAndNeverInterruptsTheComputingThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(SgemmUnderSigterm(/*stop_signals=*/true), ::testing::ExitedWithCode(0), "");
}

// A worker started with SIGTERM ignored (an inherited SIG_IGN) still hears it, as it did when
// it installed a handler.
TEST(StopSignalsTest, ASigtermIgnoredByTheParentStillArrives) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        signal(SIGTERM, SIG_IGN);
        std::atomic<int> taken{0};
        StopSignals signals([&](int) { ++taken; });
        kill(getpid(), SIGTERM);
        for (int i = 0; i < 5000 && taken == 0; ++i) {  // 5 s: a loaded machine
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        _exit(taken > 0 ? 0 : kNoneTaken);
      },
      ::testing::ExitedWithCode(0), "");
}

// A program started by a command trial gets its signals unblocked again (exec keeps the mask):
// the worker's SIGTERM must reach it. Started as command_runner.cc starts one.
TEST(StopSignalsTest, AChildUnblocksWhatTheWorkerBlocked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atomic<int> taken{0};
        StopSignals signals([&](int) { ++taken; });
        common::SpawnOptions o;
        o.argv = std::vector<std::string>({"/bin/sleep", "30"});  // parenthesized for the macro
        o.clear_signal_mask = true;
        std::string error;
        const pid_t pid = common::Spawn(o, &error);
        if (pid < 0) _exit(3);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        kill(pid, SIGTERM);
        int status = 0;
        for (int i = 0; i < 200 && common::TryWait(pid, &status) == 0; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (kill(pid, SIGKILL) == 0) {  // still there after 2 s: it ignored SIGTERM
          common::Wait(pid, &status);
          _exit(2);
        }
        _exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace stop_signals_test
}  // namespace sift::worker

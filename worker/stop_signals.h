// SIGTERM and SIGINT for sift-worker: taken by a thread of their own with sigwait, never by a
// handler that interrupts whatever thread the kernel picks, wherever that thread is.
//
// Why not signal(): to run a handler the kernel writes a frame (about 3 KB here: the registers
// and the AVX state) below the interrupted thread's stack pointer. oneDNN's sgemm kernels, which
// the trainer calls through Sgemm (worker/trainer/kernels/sgemm.h), point the stack pointer at a
// buffer they allocated on the heap while they run. A SIGTERM arriving then wrote its frame over
// the heap memory just below that buffer (the end of a layer's output tensor and glibc's chunk
// headers): "corrupted size vs. prev_size while consolidating" or a crash freeing a tensor, later.
// With the signals blocked in every other thread no frame is ever written: sigwait takes them as
// data.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <initializer_list>
#include <thread>

namespace sift::worker {

class StopSignals {
 public:
  // Blocks `signals` in the calling thread, and so in every thread started after (threads
  // inherit the mask), and calls on_signal(signal) on its own thread as each arrives. Construct
  // it before any other thread exists: one started earlier keeps the signals unblocked. Their
  // handlers are reset to the default (an inherited SIG_IGN included).
  explicit StopSignals(std::function<void(int)> on_signal,
                       std::initializer_list<int> signals = {SIGTERM, SIGINT});
  // Stops listening. The signals stay blocked: one that arrives later stays pending.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void Listen();

  sigset_t set_;
  int wake_signal_;  // sent to the listener to end it
  std::function<void(int)> on_signal_;
  std::atomic<bool> quit_{false};
  std::thread thread_;
};

}  // namespace sift::worker

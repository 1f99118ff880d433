#include "worker/stop_signals.h"

#include <stdexcept>
#include <string>

namespace sift::worker {

StopSignals::StopSignals(std::function<void(int)> on_signal, std::initializer_list<int> signals)
    : wake_signal_(*signals.begin()), on_signal_(std::move(on_signal)) {
  sigemptyset(&set_);
  for (int s : signals) sigaddset(&set_, s);
  if (const int e = pthread_sigmask(SIG_BLOCK, &set_, nullptr); e != 0) {
    throw std::runtime_error("pthread_sigmask: error " + std::to_string(e));
  }
  // An ignored signal is dropped as it is sent, so sigwait would never see it: undo an SIG_IGN
  // inherited from the parent, as signal(SIGTERM, handler) did. The default action cannot fire
  // while every thread blocks the signal.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  for (int s : signals) sigaction(s, &default_action, nullptr);
  thread_ = std::thread([this] { Listen(); });
}

StopSignals::~StopSignals() {
  quit_ = true;
  // Thread-directed: only the listener can take it, and sigwait does.
  pthread_kill(thread_.native_handle(), wake_signal_);
  thread_.join();
}

void StopSignals::Listen() {
  for (;;) {
    int signal = 0;
    if (sigwait(&set_, &signal) != 0) continue;
    if (quit_) return;
    on_signal_(signal);
  }
}

}  // namespace sift::worker

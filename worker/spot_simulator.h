// The spot simulator (--simulate-preemption): with probability `chance` a lease is reclaimed
// during one of its first epochs (drawn from the seed), alternately with notice (as SIGTERM:
// checkpoint and hand back) and without (SIGKILL: the VM is simply gone).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "sift/v1/workers_service.pb.h"

namespace sift::worker {

class CoordinatorLink;

class SpotSimulator {
 public:
  // `stop` is the worker's stop request, raised on a reclaim with notice.
  SpotSimulator(double chance, uint64_t seed, const CoordinatorLink* link, std::atomic<bool>* stop)
      : chance_(chance), seed_(seed), link_(link), stop_(stop) {}
  // Calls off a reclaim that has not come and waits for its timer: the timer reads the link,
  // which may go right after.
  ~SpotSimulator();
  SpotSimulator(const SpotSimulator&) = delete;
  SpotSimulator& operator=(const SpotSimulator&) = delete;

  // Draws whether (and when) the lease just acquired will be reclaimed.
  void Schedule(const v1::TrialAssignment& a);
  // Called as epoch `epoch` (1-based) starts: arms the reclaim timer when this is the chosen one.
  void ArmReclaim(int64_t epoch);
  // An epoch's measured length, which times the reclaims.
  void EpochDone(double seconds) {
    last_epoch_seconds_ = seconds;
    have_epoch_seconds_ = true;
  }
  // Why the worker was stopped: "simulated spot reclaim", or "" for a real stop request.
  std::string reason() const;

 private:
  const double chance_;
  const uint64_t seed_;
  const CoordinatorLink* link_;
  std::atomic<bool>* stop_;
  double last_epoch_seconds_ = 0;
  bool have_epoch_seconds_ = false;
  uint64_t leases_seen_ = 0;
  uint64_t reclaims_drawn_ = 0;
  struct Reclaim {
    int64_t epoch = 0;  // 0: none for this lease
    bool hard = false;
    double fraction = 0;  // of an epoch's measured length, after it starts
  } reclaim_;
  void CancelTimer();

  mutable std::mutex mu_;
  std::string reason_;
  std::condition_variable cancel_;
  bool cancelled_ = false;
  std::thread timer_;  // the armed reclaim, if any
};

}  // namespace sift::worker

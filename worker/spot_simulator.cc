#include "worker/spot_simulator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>

#include "search/rng.h"
#include "worker/coordinator_link.h"

namespace sift::worker {

void SpotSimulator::Schedule(const v1::TrialAssignment& a) {
  reclaim_ = Reclaim{};
  if (chance_ <= 0) return;
  search::Rng rng(search::DeriveSeed(seed_, {++leases_seen_}));
  if (rng.Uniform() >= chance_) return;
  // One of the lease's first two epochs, which it nearly always reaches: a later one would
  // often never come, because schedulers stop most trials early.
  const int64_t epochs = std::clamp<int64_t>(a.max_epochs() - a.start_epoch(), 1, 2);
  reclaim_.epoch = a.start_epoch() + 1 + static_cast<int64_t>(rng.Below(epochs));
  // Alternate with and without notice (from the seed's parity), so any run sees both kinds.
  reclaim_.hard = (seed_ + reclaims_drawn_++) % 2 == 1;
  reclaim_.fraction = rng.Uniform();
  spdlog::info("spot simulator: trial {} will be reclaimed {} during epoch {}", a.trial_number(),
               reclaim_.hard ? "without notice" : "with notice", reclaim_.epoch);
}

void SpotSimulator::ArmReclaim(int64_t epoch) {
  if (reclaim_.epoch != epoch) return;
  const double at = reclaim_.fraction * (have_epoch_seconds_ ? last_epoch_seconds_ : 0.05);
  const bool hard = reclaim_.hard;
  const std::string lease = link_->lease();
  CancelTimer();  // an earlier lease's, which never came
  cancelled_ = false;
  timer_ = std::thread([this, at, hard, lease] {
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto wait = std::chrono::milliseconds(static_cast<int64_t>(at * 1000));
      if (cancel_.wait_for(lock, wait, [&] { return cancelled_; })) return;
    }
    if (link_->lease() != lease) return;  // that trial ended first
    if (hard) {
      spdlog::warn("spot simulator: the VM vanishes (SIGKILL)");
      spdlog::default_logger()->flush();
      raise(SIGKILL);
    }
    spdlog::warn("spot simulator: reclaim notice (as SIGTERM)");
    {
      std::lock_guard<std::mutex> lock(mu_);
      reason_ = "simulated spot reclaim";
    }
    *stop_ = true;
  });
}

SpotSimulator::~SpotSimulator() { CancelTimer(); }

void SpotSimulator::CancelTimer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cancel_.notify_all();
  if (timer_.joinable()) timer_.join();
}

std::string SpotSimulator::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

}  // namespace sift::worker

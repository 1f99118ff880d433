#include "worker/trainer/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace sift::worker {

double LearningRate(const common::HParams& hp, const SchedulePosition& pos) {
  const int64_t steps_per_epoch = std::max<int64_t>(pos.steps_per_epoch, 1);
  const int64_t global = pos.epoch * steps_per_epoch + pos.step;  // 0-based step index
  const int64_t warmup_steps = hp.warmup_epochs * steps_per_epoch;
  if (global < warmup_steps) {
    return hp.lr * static_cast<double>(global + 1) / static_cast<double>(warmup_steps);
  }
  if (hp.lr_schedule == "cosine") {
    const int64_t total = std::max<int64_t>(pos.max_epochs * steps_per_epoch - warmup_steps, 1);
    const double t = std::min(1.0, static_cast<double>(global - warmup_steps) / total);
    return hp.lr * 0.5 * (1.0 + std::cos(M_PI * t));
  }
  if (hp.lr_schedule == "step") {
    const int64_t decays = pos.epoch / std::max<int64_t>(hp.step_epochs, 1);
    return hp.lr * std::pow(hp.step_gamma, static_cast<double>(decays));
  }
  return hp.lr;
}

}  // namespace sift::worker

// Learning rate per optimizer step: linear warm-up, then constant, cosine or step decay.
// A pure function of the position (epoch, step within epoch), so a resumed trial gets exactly the
// rate it would have had. Torch-free.
#pragma once

#include <cstdint>

#include "common/hparams/hparams.h"

namespace sift::worker {

struct SchedulePosition {
  int64_t epoch = 0;            // epochs completed before this step
  int64_t step = 0;             // optimizer steps already taken in this epoch
  int64_t steps_per_epoch = 1;  // optimizer steps in a full epoch
  int64_t max_epochs = 1;       // cosine decays to zero at the end of this epoch
};

// Rate for the optimizer step at `pos`. Warm-up ramps linearly from lr/warmup_steps to lr over
// warmup_epochs; cosine then decays from lr to 0 over the remaining epochs; step multiplies by
// step_gamma every step_epochs epochs (counted from 0, warm-up included).
double LearningRate(const common::HParams& hp, const SchedulePosition& pos);

}  // namespace sift::worker

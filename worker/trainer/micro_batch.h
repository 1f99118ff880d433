// `micro_batch: auto`: the worker measures what one training sample costs in memory on this
// machine and picks the largest micro-batch that fits, so a trial never runs out of memory just
// because it landed on a smaller VM. Gradient accumulation makes up the rest of the batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/hparams/hparams.h"
#include "worker/trainer/model_shape.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {

struct MicroBatchChoice {
  int64_t micro_batch = 0;        // a divisor of batch_size (batch_size itself: no accumulation)
  int64_t eval_batch = 0;         // samples per evaluation forward pass, <= kDefaultEvalBatch
  int64_t sample_bytes = 0;       // measured: one training sample's forward and backward
  int64_t eval_sample_bytes = 0;  // measured: one sample's forward pass without autograd
  int64_t fixed_bytes = 0;        // weights, gradients, optimizer state
  int64_t limit_bytes = 0;        // what the trial may use
  std::string Describe() const;   // one line for the log
};

// Measures a training step and an evaluation pass of hp's model on the CPU at small batches
// (counting every tensor allocation) and returns the largest divisor m of batch_size with
//   fixed_bytes + m * sample_bytes <= limit / kMemoryMargin,
// and the largest evaluation batch that fits the same way. limit_bytes 0 means
// AvailableMemoryBytes(). Throws std::runtime_error naming the figures when not even one sample
// fits. On CUDA (a LibTorch built with it, SIFT_TORCH_CUDA) the same probe runs on device 0 and
// reads the caching allocator's statistics; the limit is then the device's free memory and
// limit_bytes (host memory) is not used. A CUDA device under a CPU-only build: the whole batch.
// `shape`: the data's sample shape and outputs (a 28x28 image by default), which the probe feeds.
MicroBatchChoice ChooseMicroBatch(const common::HParams& hp, const std::string& device,
                                  int64_t limit_bytes, const ModelShape& shape = {});

// For `micro_batch: auto`, chooses and writes the micro-batch and evaluation batch into `o`;
// returns what was chosen (nullopt when the config fixed the micro-batch).
std::optional<MicroBatchChoice> ResolveMicroBatch(TrainerOptions* o, int64_t limit_bytes,
                                                  const ModelShape& shape = {});

// Headroom for what the count cannot see: oneDNN scratch buffers, allocator fragmentation.
inline constexpr double kMemoryMargin = 1.5;

}  // namespace sift::worker

// The training split kept on the training device for the whole trial, shuffled there: each
// batch is one index_select on the device instead of a host gather and a host-to-device copy.
// Fashion-MNIST's 60k images are 188 MB in float32; an H100 has 80 GB.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "worker/trainer/data.h"

namespace sift::worker {

// Keep the split on `device` when its tensors take at most this many bytes (a CUDA device
// under TrainerOptions::resident_data auto).
inline constexpr int64_t kResidentMaxBytes = int64_t{4} << 30;

int64_t SplitBytes(const TensorSplit& split);

class ResidentSplit {
 public:
  // Copies `split` to `device` once. Throws c10::Error when the device is out of memory.
  ResidentSplit(const TensorSplit& split, const torch::Device& device);

  // Starts an epoch: `order` (EpochPermutation's, so the order is the host loader's and a
  // resumed run the same) is copied to the device once; batches start at batch `first`.
  void Begin(const std::vector<int64_t>& order, int64_t batch_size, int64_t first);
  // The next batch, gathered on the device; false after the last.
  bool Next(Batch* out);
  int64_t num_batches() const { return num_batches_; }

 private:
  TensorSplit split_;
  torch::Tensor order_;  // int64 on the device
  int64_t batch_size_ = 1, next_ = 0, num_batches_ = 0;
};

}  // namespace sift::worker

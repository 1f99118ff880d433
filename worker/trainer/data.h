// A study's data as tensors: IDX image sets (Fashion-MNIST) and csv/npy/npz files (read by
// common/data), decoded once, split, cached by content. Loaded through data_load.h.
#pragma once

#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/data/dataset.h"
#include "worker/trainer/data_load.h"

namespace sift::worker {

struct TensorSplit {
  torch::Tensor images;  // float32 [N, ...sample]: images [N, C, H, W] or feature rows [N, F]
  torch::Tensor labels;  // int64 [N] class indices, or float32 [N] regression targets
  int64_t size() const { return labels.size(0); }
};

struct Datasets {
  TensorSplit train, val, test;
  std::string task = "classification";     // or regression
  std::vector<int64_t> sample{1, 28, 28};  // one sample's shape ([H, W] arrays gain C = 1)
  int64_t outputs = 10;                    // classes, or 1 for regression
  std::vector<std::string> class_names;    // classification: index order ("" for idx)
  // Regression: labels stay in the target's units; the model fits (y - mean) / std (dataset.h).
  double target_mean = 0.0, target_std = 1.0;
  // What made the features of a raw sample (dataset.h): idx pixels / 255 and kPixelMean/Std.
  sift::data::InputPrep input;
  bool from_cache = false;  // read from spec.cache_dir rather than decoded from the files
  bool regression() const { return task == "regression"; }
};

// Pixel normalisation: (x / 255 - kPixelMean) / kPixelStd, Fashion-MNIST's training statistics.
inline constexpr double kPixelMean = 0.2860;
inline constexpr double kPixelStd = 0.3530;

// The order of an epoch's samples: a permutation of [0, n) that depends only on (seed, epoch),
// so a resumed trial visits the same samples without storing RNG state.
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch);

struct Batch {
  torch::Tensor images;  // [B, ...sample] contiguous (pinned when the loader pins)
  torch::Tensor labels;  // [B], the split's label type
};

// Assembles batches (gathered in `order`, batch_size samples each, the last one possibly shorter)
// on a background thread, `depth` batches ahead of the consumer, starting at batch `first`;
// depth 0 assembles each batch in Next() on the calling thread instead.
// The gather is a plain memcpy loop: no ATen parallelism competes with the training threads.
class BatchLoader {
 public:
  BatchLoader(const TensorSplit& split, std::vector<int64_t> order, int64_t batch_size,
              int64_t first, bool pin_memory, int depth = 2);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch; false after the last. Rethrows a failure of the background thread.
  bool Next(Batch* out);
  // Seconds Next() spent blocked waiting for the background thread.
  double wait_seconds() const { return wait_seconds_; }
  int64_t num_batches() const { return num_batches_; }

 private:
  void Run();
  Batch Assemble(int64_t index) const;

  TensorSplit split_;
  std::vector<int64_t> order_;
  int64_t batch_size_;
  int64_t num_batches_;
  int64_t next_to_make_;
  bool pin_memory_;
  size_t depth_;
  double wait_seconds_ = 0.0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> ready_;
  int in_flight_ = 0;    // batches the producer has claimed but not yet queued
  bool done_ = false;    // producer finished
  bool cancel_ = false;  // consumer going away
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace sift::worker

// Fashion-MNIST (or any IDX image set) as tensors: decoded once, normalised, split, cached.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

namespace sift::worker {

struct DataSpec {
  std::string dir = "/usr/share/datasets/fashion-mnist";  // holds the four *-idx*-ubyte.gz files
  int64_t train_limit = 0;   // use only the first N training samples (0: all); for tests and demos
  int64_t val_size = 10000;  // held out from the end of the training file, never trained on
  int64_t test_limit = 0;    // evaluate the test set on its first N samples (0: all)
  std::string cache_dir;     // preprocessed tensors under a content hash; "" disables the cache
};

struct Split {
  torch::Tensor images;  // float32 [N, 1, 28, 28], normalised
  torch::Tensor labels;  // int64 [N]
  int64_t size() const { return labels.size(0); }
};

struct Datasets {
  Split train, val, test;
};

// Loads, validates and splits; throws std::runtime_error naming the file and the problem.
std::shared_ptr<const Datasets> LoadDatasets(const DataSpec& spec);

}  // namespace sift::worker

// Loading a study's data, as the worker's runners see it: by spec, into Datasets whose tensors
// only the trainer reads (data.h); the runners read a summary. Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/data/data_spec.h"
#include "worker/trainer/model_shape.h"

namespace sift::worker {

// The study's data spec (the idx `dir` form by default) plus where this worker caches it.
struct CachedDataSpec : sift::data::DataSpec {
  std::string cache_dir;  // preprocessed tensors under a content hash; "" disables the cache
};

struct Datasets;  // data.h

// Loads, validates and splits; throws std::runtime_error naming the file and the problem.
std::shared_ptr<const Datasets> LoadDatasets(const CachedDataSpec& spec);

// The cache file LoadDatasets uses for `spec` ("" when spec.cache_dir is empty). Its name is a
// hash of the source files' bytes (wherever they live), the preprocessing the spec asks for
// (everything but the paths) and the cache format version: a copy of the data elsewhere, or
// another study on the same file, shares the entry; an edited file gets a new one.
std::string DatasetCachePath(const CachedDataSpec& spec);
// That name's hash alone (16 hex digits), whether or not there is a cache directory: equal keys
// mean the same bytes prepared the same way.
std::string DataContentKey(const CachedDataSpec& spec);

// What the runners read of loaded data: the shape a model gets, class names, split sizes.
struct LoadedDataSummary {
  ModelShape shape;  // sample, outputs and the regression target's scale
  std::vector<std::string> class_names;
  int64_t train = 0, val = 0, test = 0;  // samples per split
};
LoadedDataSummary Summarize(const Datasets& data);

}  // namespace sift::worker

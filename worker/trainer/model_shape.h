// What the data asks of a model, without torch: the runners and the micro-batch probe's callers
// pass it; models.h builds models from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/data/dataset.h"

namespace sift::worker {

inline constexpr int64_t kNumClasses = 10;

// One sample's shape and the outputs (classes, or 1 for regression). The default is
// Fashion-MNIST's.
struct ModelShape {
  std::vector<int64_t> sample{1, 28, 28};
  int64_t outputs = kNumClasses;
  // Regression on a standardized target: a prediction in the target's units is
  // output * target_std + target_mean (the export applies it; the model itself does not).
  double target_mean = 0.0, target_std = 1.0;
  // For the export alone (the model does not use them): what its outputs mean and how a raw
  // sample became its input.
  std::string task = "classification";
  std::vector<std::string> class_names{};  // "" for idx (the class is the label's value)
  sift::data::InputPrep input{};
};

}  // namespace sift::worker

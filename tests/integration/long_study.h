// A study long enough (16 trial-epochs on 12,288 images) that a signal or a command sent after
// its first report lands mid-study: on 4,096 images (60 ms epochs) an idle machine finished both
// running trials before a Ctrl-C sent 180 ms after the first report arrived.
#pragma once

#include <string>

namespace sift::testing {

inline std::string LongStudyConfig(const std::string& name) {
  return "name: " + name + R"(
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 64}
trainer: {model: mlp, depth: 1, batch_size: 64}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 4, max_epochs: 4}
seed: 3
data: {train_limit: 12288, val_size: 512, test_limit: 200}
)";
}

}  // namespace sift::testing

// What the worker measures of a trial's model itself, beside what training reports: its
// trainable parameter count (`params`) and its forward time per validation sample
// (`inference_ms`), under common/metric_names.h's names.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>

#include "worker/trainer/data.h"

namespace sift::worker {

// At most this many validation samples (the split's first) are timed, in batches of at most
// this size: about a quarter of a default 1000-sample evaluation pass per repeat, so the
// measurement stays a small share of an epoch however large the validation split is.
inline constexpr int64_t kInferenceSamples = 512;
// One untimed pass (allocator, oneDNN primitives, bf16 weight copies), then this many timed
// passes; the median is taken, so one pass slowed by a neighbour on a shared host does not count.
inline constexpr int kInferenceRepeats = 5;

// Elements of the parameters that require gradients (a frozen TorchScript submodule's do not).
int64_t TrainableParams(const torch::nn::Module& model);

// Milliseconds per sample of `forward` over the first kInferenceSamples of `split`, moved to
// `device`; `forward` runs the model as evaluation does (eval mode, no grad, the trial's
// autocast). Waits for a CUDA device before each clock read. NaN for an empty split.
double InferenceMsPerSample(const TensorSplit& split, int64_t eval_batch,
                            const torch::Device& device,
                            const std::function<void(const torch::Tensor&)>& forward);

}  // namespace sift::worker

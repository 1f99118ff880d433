#include "worker/trainer/measure.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

namespace sift::worker {

int64_t TrainableParams(const torch::nn::Module& model) {
  int64_t n = 0;
  for (const auto& p : model.parameters()) {
    if (p.requires_grad()) n += p.numel();
  }
  return n;
}

double InferenceMsPerSample(const TensorSplit& split, int64_t eval_batch,
                            const torch::Device& device,
                            const std::function<void(const torch::Tensor&)>& forward) {
  const int64_t n = std::min(split.size(), kInferenceSamples);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const int64_t batch = std::clamp<int64_t>(eval_batch, 1, kInferenceSamples);
  // On the device before the clock starts: the forward passes are timed, not the copies.
  std::vector<torch::Tensor> batches;
  for (int64_t start = 0; start < n; start += batch) {
    batches.push_back(split.images.narrow(0, start, std::min(batch, n - start)).to(device));
  }
  const auto wait = [&device] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  torch::NoGradGuard no_grad;
  forward(batches.front());
  std::vector<double> seconds;
  for (int r = 0; r < kInferenceRepeats; ++r) {
    wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& x : batches) forward(x);
    wait();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const auto middle = seconds.begin() + static_cast<long>(seconds.size() / 2);
  std::nth_element(seconds.begin(), middle, seconds.end());
  return *middle * 1000.0 / static_cast<double>(n);
}

}  // namespace sift::worker

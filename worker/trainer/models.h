// The models a trial can train: an MLP (any sample shape, flattened) and a small CNN (images
// [C, H, W]); their input and output sizes come from the data.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <vector>

#include "worker/hparams/hparams.h"
#include "worker/trainer/fused_linear.h"

namespace sift::worker {

inline constexpr int64_t kNumClasses = 10;

// What the data asks of a model: one sample's shape and the outputs (classes, or 1 for
// regression). The default is Fashion-MNIST's.
struct ModelShape {
  std::vector<int64_t> sample{1, 28, 28};
  int64_t outputs = kNumClasses;
};

// Common base: forward(samples [B, ...]) -> logits or predictions [B, outputs]. Dropout draws from the generator
// set with set_generator(), not the global one, so a trainer's randomness is its own and can be
// checkpointed.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  void set_generator(at::Generator generator) { generator_ = std::move(generator); }

 protected:
  torch::Tensor Dropout(const torch::Tensor& x, double p);
  const c10::optional<at::Generator>& generator() const { return generator_; }

 private:
  c10::optional<at::Generator> generator_;
};

// Hidden widths: hidden, hidden/2, ... (never below min(hidden, 32)), `depth` layers; ReLU and
// dropout after each; a linear head. hidden=512, depth=2 is 784-512-256-10.
class Mlp : public Net {
 public:
  Mlp(const HParams& hp, int64_t input_features, int64_t outputs = kNumClasses);
  torch::Tensor forward(torch::Tensor x) override;

 private:
  std::vector<torch::nn::Linear> layers_;
  torch::nn::Linear head_{nullptr};
  std::vector<Bf16Weight> bf16_weights_;  // per layer, head last: the bf16 path's copies
  double dropout_;
};

// `depth` blocks of conv(kernel_size, same padding, no bias) - batch norm - ReLU, channels
// doubling from `channels`, a 2x2 max pool after each block while the feature map is at least
// 4 pixels wide (computed as pool then ReLU: the same values and gradients); then global average
// pooling, dropout and a linear head. The convolution weights are channels-last (NHWC) tensors.
class Cnn : public Net {
 public:
  Cnn(const HParams& hp, int64_t in_channels, int64_t outputs = kNumClasses);
  torch::Tensor forward(torch::Tensor x) override;
  // Multiply-accumulates of one forward pass on an image of `size` x `size` (for FLOP figures).
  int64_t ForwardMacs(int64_t size) const;
  // Loads as Module::load does, then puts the convolution weights back in channels-last layout.
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void UseChannelsLast();

  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> norms_;
  torch::nn::Linear head_{nullptr};
  double dropout_;
  int64_t kernel_size_;
};

// Builds the model hp.model names for data of `shape`, initialised from the global torch
// generator. Throws std::invalid_argument when the model cannot take the data (a CNN on rows).
std::shared_ptr<Net> MakeModel(const HParams& hp, const ModelShape& shape = {});

}  // namespace sift::worker

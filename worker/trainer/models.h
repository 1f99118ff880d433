// The models a trial can train: an MLP and a small CNN, both for 28x28 single-channel images.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>

#include "worker/hparams/hparams.h"
#include "worker/trainer/fused_linear.h"

namespace sift::worker {

inline constexpr int64_t kNumClasses = 10;

// Common base: forward(images [B, 1, H, W]) -> logits [B, 10]. Dropout draws from the generator
// set with set_generator(), not the global one, so a trainer's randomness is its own and can be
// checkpointed.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  void set_generator(at::Generator generator) { generator_ = std::move(generator); }

 protected:
  torch::Tensor Dropout(const torch::Tensor& x, double p);

 private:
  c10::optional<at::Generator> generator_;
};

// Hidden widths: hidden, hidden/2, ... (never below min(hidden, 32)), `depth` layers; ReLU and
// dropout after each; a linear head. hidden=512, depth=2 is 784-512-256-10.
class Mlp : public Net {
 public:
  Mlp(const HParams& hp, int64_t input_features);
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
  Cnn(const HParams& hp, int64_t in_channels);
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

// Builds the model hp.model names, initialised from the global torch generator.
std::shared_ptr<Net> MakeModel(const HParams& hp);

}  // namespace sift::worker

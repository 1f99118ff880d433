// The built-in models a trial can train: an MLP (any sample shape, flattened; classification or
// regression), a small CNN and a residual net (images [C, H, W], resnet.h); their input and output
// sizes come from the data, every other shape from HParams.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/data/dataset.h"
#include "common/hparams/hparams.h"
#include "worker/trainer/kernels/fused_linear.h"
#include "worker/trainer/model_shape.h"

namespace sift::worker {

// Common base: forward(samples [B, ...]) -> logits or predictions [B, outputs]. Dropout draws from
// the generator set with set_generator(), not the global one, so a trainer's randomness is its own
// and can be checkpointed.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  void set_generator(at::Generator generator) { generator_ = std::move(generator); }
  // TorchScript source of `def forward(self, x)` computing what forward() does in eval mode,
  // over attributes named as this module's parameters and buffers ("fc1.weight" is
  // self.fc1.weight); "" when the model cannot be exported (export.h).
  virtual std::string TorchScriptForward() const { return ""; }

 protected:
  torch::Tensor Dropout(const torch::Tensor& x, double p);
  const c10::optional<at::Generator>& generator() const { return generator_; }

 private:
  c10::optional<at::Generator> generator_;
};

// The `depth` hidden widths HParams asks for: widthN where set, else hidden * taper^i rounded
// down, never below min(hidden, 32) nor above 8192.
std::vector<int64_t> MlpWidths(const common::HParams& hp);

// `depth` hidden layers of MlpWidths, each linear - norm (none, batch or layer) - activation -
// dropout; a linear head. hidden=512, depth=2 is 784-512-256-10. Regression data gives one output.
class Mlp : public Net {
 public:
  Mlp(const common::HParams& hp, int64_t input_features, int64_t outputs = kNumClasses);
  torch::Tensor forward(torch::Tensor x) override;
  std::string TorchScriptForward() const override;

 private:
  std::vector<torch::nn::Linear> layers_;
  std::vector<torch::nn::BatchNorm1d> batch_norms_;  // per layer with norm: batch
  std::vector<torch::nn::LayerNorm> layer_norms_;    // per layer with norm: layer
  torch::nn::Linear head_{nullptr};
  std::vector<Bf16Weight> bf16_weights_;  // per layer, head last: the bf16 path's copies
  double dropout_;
  std::string activation_, norm_;
};

// `depth` blocks of conv(kernel_size, same padding) - batch norm (or a conv bias without) -
// activation, channels doubling from `channels`, a 2x2 max or average pool after each block while
// the feature map is at least 4 pixels wide (for ReLU and max, computed as pool then ReLU: the
// same values and gradients); then global average pooling, dropout and a linear head. The
// convolution weights are channels-last (NHWC) tensors.
class Cnn : public Net {
 public:
  Cnn(const common::HParams& hp, int64_t in_channels, int64_t outputs = kNumClasses);
  torch::Tensor forward(torch::Tensor x) override;
  std::string TorchScriptForward() const override;
  // Multiply-accumulates of one forward pass on an image of `size` x `size` (for FLOP figures).
  int64_t ForwardMacs(int64_t size) const;
  // Loads as Module::load does, then puts the convolution weights back in channels-last layout.
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void UseChannelsLast();

  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> norms_;  // empty without batch_norm
  torch::nn::Linear head_{nullptr};
  double dropout_;
  int64_t kernel_size_;
  std::string activation_, pooling_;
};

// Builds the model hp.model names for data of `shape`, initialised from the global torch
// generator. Throws std::invalid_argument when the model cannot take the data (a CNN on rows).
// The one place that maps a model name to a class.
std::shared_ptr<Net> MakeModel(const common::HParams& hp, const ModelShape& shape = {});

}  // namespace sift::worker

// A small residual network for images such as 32x32 colour (CIFAR-10 shaped) data, after He et
// al., "Deep Residual Learning for Image Recognition" (CVPR 2016), section 4.2: a 3x3 stem, then
// `stages` stages of `blocks` basic blocks each, the width doubling and the resolution halving at
// every stage after the first, global average pooling and a linear head.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "common/hparams/hparams.h"
#include "worker/trainer/models.h"

namespace sift::worker {

// conv3x3(stride) - norm - activation - conv3x3 - norm, plus the input (through a 1x1
// convolution and norm where the stride or width changes), then the activation. Without batch
// norm the convolutions have biases.
class ResidualBlock : public torch::nn::Module {
 public:
  ResidualBlock(int64_t in, int64_t out, int64_t stride, bool batch_norm, std::string activation);
  torch::Tensor forward(torch::Tensor x);
  // TorchScript statements (indented for a method body) taking `x` to the block's output in
  // `x`, for the block registered as `name`.
  std::string Script(const std::string& name) const;

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, shortcut_bn_{nullptr};
  int64_t stride_;
  std::string activation_;
};

// Widths channels, 2 x channels, ... per stage. channels=16, blocks=3, stages=3 is He et al.'s
// ResNet-20.
class ResNet : public Net {
 public:
  ResNet(const common::HParams& hp, int64_t in_channels, int64_t outputs = kNumClasses);
  torch::Tensor forward(torch::Tensor x) override;
  std::string TorchScriptForward() const override;

 private:
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;
  std::vector<std::string> block_names_;
  torch::nn::Linear head_{nullptr};
  double dropout_;
  std::string activation_;
};

}  // namespace sift::worker

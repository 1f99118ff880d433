#include "worker/trainer/resnet.h"

#include <utility>

#include "worker/trainer/model_ops.h"

namespace sift::worker {
namespace {

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, bool bias) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                               .stride(stride)
                               .padding(/*padding=*/kernel / 2)
                               .bias(bias));
}

}  // namespace

ResidualBlock::ResidualBlock(int64_t in, int64_t out, int64_t stride, bool batch_norm,
                             std::string activation)
    : stride_(stride), activation_(std::move(activation)) {
  conv1_ = register_module("conv1", Conv(in, out, /*kernel=*/3, stride, /*bias=*/!batch_norm));
  if (batch_norm) bn1_ = register_module("bn1", torch::nn::BatchNorm2d(out));
  conv2_ = register_module("conv2", Conv(out, out, /*kernel=*/3, /*stride=*/1, !batch_norm));
  if (batch_norm) bn2_ = register_module("bn2", torch::nn::BatchNorm2d(out));
  if (stride != 1 || in != out) {
    shortcut_ = register_module("shortcut", Conv(in, out, /*kernel=*/1, stride, !batch_norm));
    if (batch_norm) shortcut_bn_ = register_module("shortcut_bn", torch::nn::BatchNorm2d(out));
  }
}

torch::Tensor ResidualBlock::forward(torch::Tensor x) {
  auto y = conv1_->forward(x);
  if (bn1_) y = bn1_->forward(y);
  y = conv2_->forward(Activate(y, activation_));
  if (bn2_) y = bn2_->forward(y);
  if (shortcut_) {
    x = shortcut_->forward(x);
    if (shortcut_bn_) x = shortcut_bn_->forward(x);
  }
  return Activate(y + x, activation_);
}

std::string ResidualBlock::Script(const std::string& name) const {
  std::string src;
  const auto line = [&src](const std::string& stmt) { src += "    " + stmt + "\n"; };
  const bool bias = !bn1_;
  const std::string n = name + ".";
  line("y = " + ScriptConv2d(n + "conv1", "x", bias, stride_, /*padding=*/1));
  if (bn1_) line("y = " + ScriptBatchNorm(n + "bn1", "y", bn1_->options.eps()));
  line("y = " + ScriptActivation(activation_, "y"));
  line("y = " + ScriptConv2d(n + "conv2", "y", bias, /*stride=*/1, /*padding=*/1));
  if (bn2_) line("y = " + ScriptBatchNorm(n + "bn2", "y", bn2_->options.eps()));
  if (shortcut_) {
    line("x = " + ScriptConv2d(n + "shortcut", "x", bias, stride_, /*padding=*/0));
    if (shortcut_bn_) {
      line("x = " + ScriptBatchNorm(n + "shortcut_bn", "x", shortcut_bn_->options.eps()));
    }
  }
  line("x = " + ScriptActivation(activation_, "y + x"));
  return src;
}

ResNet::ResNet(const common::HParams& hp, int64_t in_channels, int64_t outputs)
    : dropout_(hp.dropout), activation_(hp.activation) {
  stem_ = register_module("stem", Conv(in_channels, hp.channels, /*kernel=*/3, /*stride=*/1,
                                       /*bias=*/!hp.batch_norm));
  if (hp.batch_norm) stem_bn_ = register_module("stem_bn", torch::nn::BatchNorm2d(hp.channels));
  int64_t in = hp.channels;
  for (int64_t s = 0; s < hp.stages; ++s) {
    const int64_t out = hp.channels << s;
    for (int64_t b = 0; b < hp.blocks; ++b) {
      const int64_t stride = s > 0 && b == 0 ? 2 : 1;
      block_names_.push_back("stage" + std::to_string(s + 1) + "_block" + std::to_string(b + 1));
      blocks_.push_back(register_module(
          block_names_.back(),
          std::make_shared<ResidualBlock>(in, out, stride, hp.batch_norm, hp.activation)));
      in = out;
    }
  }
  head_ = register_module("head", torch::nn::Linear(in, outputs));
}

torch::Tensor ResNet::forward(torch::Tensor x) {
  x = stem_->forward(x);
  if (stem_bn_) x = stem_bn_->forward(x);
  x = Activate(x, activation_);
  for (auto& block : blocks_) x = block->forward(x);
  return head_->forward(Dropout(x.mean(/*dim=*/{2, 3}), dropout_));
}

std::string ResNet::TorchScriptForward() const {
  std::string src = "def forward(self, x):\n";
  const auto line = [&src](const std::string& stmt) { src += "    " + stmt + "\n"; };
  line("x = " + ScriptConv2d("stem", "x", /*bias=*/!stem_bn_, /*stride=*/1, /*padding=*/1));
  if (stem_bn_) line("x = " + ScriptBatchNorm("stem_bn", "x", stem_bn_->options.eps()));
  line("x = " + ScriptActivation(activation_, "x"));
  for (size_t i = 0; i < blocks_.size(); ++i) src += blocks_[i]->Script(block_names_[i]);
  line("x = torch.mean(x, [2, 3])");
  return src + "    return " + ScriptLinear("head", "x") + "\n";
}

}  // namespace sift::worker

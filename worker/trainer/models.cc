#include "worker/trainer/models.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "worker/trainer/kernels/norm_pool_relu.h"
#include "worker/trainer/model_ops.h"
#include "worker/trainer/resnet.h"
#include "worker/trainer/torchscript_model.h"

namespace sift::worker {
namespace {

constexpr int64_t kMinMlpWidth = 32;
constexpr int64_t kMaxMlpWidth = 8192;
constexpr int64_t kMinPoolSize = 4;

// Under bf16 autocast a linear layer hands the next norm bf16 activations, and LibTorch 1.13's
// CPU norms refuse an input whose type is not their weight's ("expected scalar type BFloat16 but
// found Float"): normalize in the weight's type (fp32), as autocast does for norms on CUDA.
torch::Tensor AsTypeOf(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.scalar_type() == weight.scalar_type() ? x : x.to(weight.scalar_type());
}

}  // namespace

torch::Tensor Net::Dropout(const torch::Tensor& x, double p) {
  if (!is_training() || p <= 0.0) return x;
  auto mask = torch::empty_like(x).bernoulli_(1.0 - p, generator_);
  return x * mask * (1.0 / (1.0 - p));
}

std::vector<int64_t> MlpWidths(const common::HParams& hp) {
  std::vector<int64_t> widths;
  const int64_t floor = std::min(hp.hidden, kMinMlpWidth);
  for (int64_t i = 0; i < hp.depth; ++i) {
    // taper 0.5 gives hidden >> i exactly (powers of two are exact in a double).
    const double tapered = static_cast<double>(hp.hidden) * std::pow(hp.taper, i);
    const int64_t w = static_cast<int64_t>(std::min(tapered, static_cast<double>(kMaxMlpWidth)));
    widths.push_back(hp.widths[i] > 0 ? hp.widths[i] : std::max(w, floor));
  }
  return widths;
}

Mlp::Mlp(const common::HParams& hp, int64_t input_features, int64_t outputs)
    : dropout_(hp.dropout), activation_(hp.activation), norm_(hp.norm) {
  int64_t in = input_features;
  int64_t i = 0;
  for (const int64_t out : MlpWidths(hp)) {
    const std::string n = std::to_string(++i);
    layers_.push_back(
        register_module("fc" + n, torch::nn::Linear(/*in_features=*/in, /*out_features=*/out)));
    if (norm_ == "batch") {
      batch_norms_.push_back(register_module("norm" + n, torch::nn::BatchNorm1d(out)));
    } else if (norm_ == "layer") {
      layer_norms_.push_back(
          register_module("norm" + n, torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}))));
    }
    in = out;
  }
  head_ = register_module("head", torch::nn::Linear(in, outputs));
  bf16_weights_.resize(layers_.size() + 1);
}

torch::Tensor Mlp::forward(torch::Tensor x) {
  x = x.flatten(/*start_dim=*/1);
  // The fused layers are linear + ReLU: they serve the default MLP (no norm, ReLU) only.
  const bool fusable = activation_ == "relu" && norm_ == "none";
  // On the CPU in fp32, each layer is one FusedLinear node: its products run oneDNN's sgemm
  // (trainer_bench MLP fp32 83k -> 94k samples/s).
  if (fusable && FusedLinearApplies(x, head_)) {
    for (auto& layer : layers_) x = Dropout(FusedLinear(x, layer, /*relu=*/true), dropout_);
    return FusedLinear(x, head_, /*relu=*/false);
  }
  // Under bf16 autocast, the same with bf16 products on oneDNN (AVX512-BF16): activations pass
  // between layers in bf16, logits come out in fp32.
  if (fusable && FusedLinearBf16Applies(x, head_)) {
    for (size_t i = 0; i < layers_.size(); ++i) {
      x = Dropout(FusedLinearBf16(x, layers_[i], /*relu=*/true, bf16_weights_[i]), dropout_);
    }
    return FusedLinearBf16(x, head_, /*relu=*/false, bf16_weights_.back());
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    x = layers_[i]->forward(x);
    if (!batch_norms_.empty()) {
      x = batch_norms_[i]->forward(AsTypeOf(x, batch_norms_[i]->weight));
    }
    if (!layer_norms_.empty()) {
      x = layer_norms_[i]->forward(AsTypeOf(x, layer_norms_[i]->weight));
    }
    x = Dropout(Activate(x, activation_), dropout_);
  }
  return head_->forward(x);
}

std::string Mlp::TorchScriptForward() const {
  std::string src = "def forward(self, x):\n    x = torch.flatten(x, 1)\n";
  const auto line = [&src](const std::string& expr) { src += "    x = " + expr + "\n"; };
  for (size_t i = 0; i < layers_.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    line(ScriptLinear("fc" + n, "x"));
    if (!batch_norms_.empty())
      line(ScriptBatchNorm("norm" + n, "x", batch_norms_[i]->options.eps()));
    if (!layer_norms_.empty()) {
      line(ScriptLayerNorm("norm" + n, "x", layers_[i]->options.out_features(),
                           layer_norms_[i]->options.eps()));
    }
    line(ScriptActivation(activation_, "x"));
  }
  return src + "    return " + ScriptLinear("head", "x") + "\n";
}

Cnn::Cnn(const common::HParams& hp, int64_t in_channels, int64_t outputs)
    : dropout_(hp.dropout),
      kernel_size_(hp.kernel_size),
      activation_(hp.activation),
      pooling_(hp.pooling) {
  int64_t in = in_channels;
  for (int64_t i = 0; i < hp.depth; ++i) {
    const int64_t out = hp.channels << i;
    const std::string n = std::to_string(i + 1);
    convs_.push_back(register_module(
        "conv" + n, torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, hp.kernel_size)
                                          .padding(/*padding=*/hp.kernel_size / 2)
                                          .bias(!hp.batch_norm))));
    if (hp.batch_norm) norms_.push_back(register_module("bn" + n, torch::nn::BatchNorm2d(out)));
    in = out;
  }
  head_ = register_module("head", torch::nn::Linear(in, outputs));
  UseChannelsLast();
}

// Channels-last (NHWC) convolution weights make oneDNN run the convolutions, batch norm and
// pooling in NHWC; the NCHW max-pool kernel alone was a third of the step (trainer_bench CNN fp32:
// 4.4k -> 7.3k samples/s). conv1's weight has one input channel, where contiguous(ChannelsLast)
// keeps NCHW strides and the first block would stay NCHW: an explicit NHWC copy sets them, as
// Python's module.to(memory_format=torch.channels_last) does.
void Cnn::UseChannelsLast() {
  torch::NoGradGuard no_grad;
  for (auto& conv : convs_) {
    auto& w = conv->weight;
    w.set_data(torch::empty_like(w, at::MemoryFormat::ChannelsLast).copy_(w));
  }
}

void Cnn::load(torch::serialize::InputArchive& archive) {
  torch::nn::Module::load(archive);  // adopts the archive's strides
  UseChannelsLast();
}

torch::Tensor Cnn::forward(torch::Tensor x) {
  // ReLU and max pooling commute; the fused kernel and the pool-first order rely on it.
  const bool relu_max = activation_ == "relu" && pooling_ == "max";
  for (size_t i = 0; i < convs_.size(); ++i) {
    x = convs_[i]->forward(x);
    const bool pool = x.size(-1) >= kMinPoolSize;
    if (!norms_.empty()) {
      if (relu_max && NormPoolReluApplies(x, norms_[i])) {
        x = NormPoolRelu(x, norms_[i], pool);
        continue;
      }
      x = norms_[i]->forward(x);
    }
    if (relu_max) {
      // Pool, then ReLU: max and ReLU commute (both monotone; the pool's argmax is the same
      // element and ReLU zeroes the same gradients), and ReLU then touches a quarter of the
      // elements. In place: the pool's backward keeps its input and indices, not its output.
      if (pool) x = torch::max_pool2d(x, /*kernel_size=*/2);
      x = x.relu_();
      continue;
    }
    x = Activate(x, activation_);
    if (pool) {
      x = pooling_ == "max" ? torch::max_pool2d(x, /*kernel_size=*/2)
                            : torch::avg_pool2d(x, /*kernel_size=*/2);
    }
  }
  x = GlobalMeanApplies(x) ? GlobalMean(x) : x.mean(/*dim=*/{2, 3});
  return head_->forward(Dropout(x, dropout_));
}

std::string Cnn::TorchScriptForward() const {
  std::string src = "def forward(self, x):\n";
  const auto line = [&src](const std::string& stmt) { src += "    " + stmt + "\n"; };
  const bool relu_max = activation_ == "relu" && pooling_ == "max";
  const std::string pool = "torch." + pooling_ + "_pool2d(x, [2, 2])";
  for (size_t i = 0; i < convs_.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    line("x = " + ScriptConv2d("conv" + n, "x", /*bias=*/norms_.empty(), /*stride=*/1,
                               /*padding=*/kernel_size_ / 2));
    if (!norms_.empty()) line("x = " + ScriptBatchNorm("bn" + n, "x", norms_[i]->options.eps()));
    if (!relu_max) line("x = " + ScriptActivation(activation_, "x"));
    line("if x.size(-1) >= " + std::to_string(kMinPoolSize) + ":");
    line("    x = " + pool);
    if (relu_max) line("x = torch.relu(x)");
  }
  line("x = torch.mean(x, [2, 3])");
  return src + "    return " + ScriptLinear("head", "x") + "\n";
}

int64_t Cnn::ForwardMacs(int64_t size) const {
  int64_t macs = 0;
  for (const auto& conv : convs_) {
    const auto& o = conv->options;
    macs += size * size * o.out_channels() * o.in_channels() * kernel_size_ * kernel_size_;
    if (size >= kMinPoolSize) size /= 2;
  }
  return macs + head_->options.in_features() * head_->options.out_features();
}

std::shared_ptr<Net> MakeModel(const common::HParams& hp, const ModelShape& shape) {
  int64_t features = 1;
  std::string dims;
  for (int64_t d : shape.sample) {
    features *= d;
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  if (hp.model == "torchscript") return MakeTorchScriptModel(hp, shape.outputs);
  if (hp.model == "mlp") return std::make_shared<Mlp>(hp, features, shape.outputs);
  if (hp.model == "cnn" || hp.model == "resnet") {
    if (shape.sample.size() != 3) {
      throw std::invalid_argument("model: " + hp.model +
                                  " needs image samples [channels, height, width], got [" + dims +
                                  "]; use mlp for rows of features");
    }
    if (hp.model == "resnet") {
      return std::make_shared<ResNet>(hp, /*in_channels=*/shape.sample[0], shape.outputs);
    }
    return std::make_shared<Cnn>(hp, /*in_channels=*/shape.sample[0], shape.outputs);
  }
  throw std::invalid_argument("model: unknown '" + hp.model + "'");
}

}  // namespace sift::worker

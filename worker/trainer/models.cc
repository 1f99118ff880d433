#include "worker/trainer/models.h"

#include <stdexcept>
#include <string>

#include "worker/trainer/norm_pool_relu.h"
#include "worker/trainer/torchscript_model.h"


namespace sift::worker {
namespace {

constexpr int64_t kMinMlpWidth = 32;
constexpr int64_t kMinPoolSize = 4;

}  // namespace

torch::Tensor Net::Dropout(const torch::Tensor& x, double p) {
  if (!is_training() || p <= 0.0) return x;
  auto mask = torch::empty_like(x).bernoulli_(1.0 - p, generator_);
  return x * mask * (1.0 / (1.0 - p));
}

Mlp::Mlp(const HParams& hp, int64_t input_features, int64_t outputs) : dropout_(hp.dropout) {
  int64_t in = input_features;
  const int64_t floor = std::min(hp.hidden, kMinMlpWidth);
  for (int64_t i = 0; i < hp.depth; ++i) {
    const int64_t out = std::max(hp.hidden >> i, floor);
    layers_.push_back(register_module("fc" + std::to_string(i + 1),
                                      torch::nn::Linear(/*in_features=*/in, /*out_features=*/out)));
    in = out;
  }
  head_ = register_module("head", torch::nn::Linear(in, outputs));
  bf16_weights_.resize(layers_.size() + 1);
}

torch::Tensor Mlp::forward(torch::Tensor x) {
  x = x.flatten(/*start_dim=*/1);
  // On the CPU in fp32, each layer is one FusedLinear node: its products run oneDNN's sgemm
  // (trainer_bench MLP fp32 83k -> 94k samples/s).
  if (FusedLinearApplies(x, head_)) {
    for (auto& layer : layers_) x = Dropout(FusedLinear(x, layer, /*relu=*/true), dropout_);
    return FusedLinear(x, head_, /*relu=*/false);
  }
  // Under bf16 autocast, the same with bf16 products on oneDNN (AVX512-BF16): activations pass
  // between layers in bf16, logits come out in fp32.
  if (FusedLinearBf16Applies(x, head_)) {
    for (size_t i = 0; i < layers_.size(); ++i) {
      x = Dropout(FusedLinearBf16(x, layers_[i], /*relu=*/true, bf16_weights_[i]), dropout_);
    }
    return FusedLinearBf16(x, head_, /*relu=*/false, bf16_weights_.back());
  }
  // In place: the linear layer's backward keeps its input and weight, not its output.
  for (auto& layer : layers_) x = Dropout(layer->forward(x).relu_(), dropout_);
  return head_->forward(x);
}

Cnn::Cnn(const HParams& hp, int64_t in_channels, int64_t outputs)
    : dropout_(hp.dropout), kernel_size_(hp.kernel_size) {
  int64_t in = in_channels;
  for (int64_t i = 0; i < hp.depth; ++i) {
    const int64_t out = hp.channels << i;
    const std::string n = std::to_string(i + 1);
    convs_.push_back(register_module(
        "conv" + n, torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, hp.kernel_size)
                                          .padding(/*padding=*/hp.kernel_size / 2)
                                          .bias(false))));
    norms_.push_back(register_module("bn" + n, torch::nn::BatchNorm2d(out)));
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
  for (size_t i = 0; i < convs_.size(); ++i) {
    x = convs_[i]->forward(x);
    if (NormPoolReluApplies(x, norms_[i])) {
      x = NormPoolRelu(x, norms_[i], /*pool=*/x.size(-1) >= kMinPoolSize);
      continue;
    }
    x = norms_[i]->forward(x);
    // Pool, then ReLU: max and ReLU commute (both monotone; the pool's argmax is the same
    // element and ReLU zeroes the same gradients), and ReLU then touches a quarter of the
    // elements. In place: the pool's backward keeps its input and indices, not its output.
    if (x.size(-1) >= kMinPoolSize) x = torch::max_pool2d(x, /*kernel_size=*/2);
    x = x.relu_();
  }
  x = GlobalMeanApplies(x) ? GlobalMean(x) : x.mean(/*dim=*/{2, 3});
  return head_->forward(Dropout(x, dropout_));
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

std::shared_ptr<Net> MakeModel(const HParams& hp, const ModelShape& shape) {
  int64_t features = 1;
  std::string dims;
  for (int64_t d : shape.sample) {
    features *= d;
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  if (hp.model == "torchscript") return MakeTorchScriptModel(hp, shape.outputs);
  if (hp.model == "mlp") return std::make_shared<Mlp>(hp, features, shape.outputs);
  if (hp.model == "cnn") {
    if (shape.sample.size() != 3) {
      throw std::invalid_argument("model: cnn needs image samples [channels, height, width], got [" +
                                  dims + "]; use mlp for rows of features");
    }
    return std::make_shared<Cnn>(hp, /*in_channels=*/shape.sample[0], shape.outputs);
  }
  throw std::invalid_argument("model: unknown '" + hp.model + "'");
}

}  // namespace sift::worker

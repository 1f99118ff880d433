// The built-in zoo's shape settings: widths, activations, norms, pooling, batch norm on and off,
// the residual net; each builds the shapes it says, and trains (the loss falls on small data).
#include <gtest/gtest.h>

#include <memory>

#include "tests/worker/test_util.h"
#include "worker/trainer/models.h"
#include "worker/trainer/resnet.h"

namespace sift::worker {
namespace zoo_models_test {

int64_t CountParameters(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// Linear layers in -> out with biases.
int64_t LinearParams(int64_t in, int64_t out) { return in * out + out; }

// Fits `net` to one fixed batch for a few Adam steps; returns the first and the last loss.
std::pair<double, double> FitSteps(Net& net, const torch::Tensor& x, const torch::Tensor& y,
                                   int steps = 25) {
  net.train();
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    auto out = net.forward(x);
    auto loss = y.scalar_type() == torch::kLong ? torch::cross_entropy_loss(out, y)
                                                : torch::mse_loss(out.squeeze(1), y);
    loss.backward();
    opt.step();
    (i == 0 ? first : last) = loss.item<double>();
  }
  return {first, last};
}

// `n` samples of `shape` with labels from the sign of their mean (two of ten classes).
std::pair<torch::Tensor, torch::Tensor> Images(const std::vector<int64_t>& shape, int64_t n = 64) {
  torch::manual_seed(5);
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), shape.begin(), shape.end());
  auto x = torch::randn(dims);
  auto y = (x.flatten(1).mean(1) > 0).to(torch::kLong);
  return {x, y};
}

void ExpectTrains(const common::HParams& hp, const ModelShape& shape, const std::string& what,
                  int64_t n = 64) {
  auto [x, y] = Images(shape.sample, n);
  torch::manual_seed(1);
  auto net = MakeModel(hp, shape);
  EXPECT_EQ(net->forward(x).sizes(), (std::vector<int64_t>{n, shape.outputs})) << what;
  const auto [first, last] = FitSteps(*net, x, y);
  EXPECT_LT(last, 0.7 * first) << what;
}

TEST(ZooTest, MlpWidthsTaperAndPerLayerOverride) {
  common::HParams hp;
  hp.hidden = 512;
  hp.depth = 3;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{512, 256, 128}));  // the default halving
  hp.taper = 1.0;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{512, 512, 512}));
  hp.taper = 0.75;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{512, 384, 288}));
  hp.widths[1] = 100;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{512, 100, 288}));
  hp = common::HParams{};
  hp.hidden = 64;
  hp.depth = 4;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{64, 32, 32, 32}));  // never below 32
  hp.hidden = 6000;
  hp.taper = 2.0;
  EXPECT_EQ(MlpWidths(hp), (std::vector<int64_t>{6000, 8192, 8192, 8192}));  // nor above 8192
}

// The default MLP is the one it always was: same layers, names and parameter count.
TEST(ZooTest, DefaultMlpKeepsItsLayers) {
  common::HParams hp;
  hp.hidden = 512;
  auto net = MakeModel(hp);
  std::vector<std::string> names;
  for (const auto& p : net->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                             "head.weight", "head.bias"}));
  EXPECT_EQ(CountParameters(*net),
            LinearParams(784, 512) + LinearParams(512, 256) + LinearParams(256, 10));
}

TEST(ZooTest, MlpNormsAddScaleAndShiftPerLayer) {
  for (const std::string norm : {"batch", "layer"}) {
    common::HParams hp;
    hp.hidden = 64;
    hp.norm = norm;
    auto net = MakeModel(hp, ModelShape{{20}, 3});
    EXPECT_EQ(CountParameters(*net),
              LinearParams(20, 64) + 2 * 64 + LinearParams(64, 32) + 2 * 32 + LinearParams(32, 3))
        << norm;
    EXPECT_EQ(net->named_buffers().size(), norm == "batch" ? 6u : 0u) << norm;  // running stats
  }
}

TEST(ZooTest, MlpTrainsWithEveryActivationAndNorm) {
  for (const std::string activation : {"relu", "gelu", "silu", "tanh"}) {
    for (const std::string norm : {"none", "batch", "layer"}) {
      common::HParams hp;
      hp.hidden = 64;
      hp.activation = activation;
      hp.norm = norm;
      hp.dropout = 0.1;
      ExpectTrains(hp, ModelShape{{3, 8, 8}, 10}, activation + "/" + norm);
    }
  }
}

// Regression: one output, trained on mean squared error (the trainer's own regression path is
// in file_data_test).
TEST(ZooTest, MlpServesRegression) {
  torch::manual_seed(5);
  auto x = torch::randn({128, 6});
  auto y = x.matmul(torch::tensor({1.0f, -2.0f, 0.5f, 0.0f, 3.0f, 1.0f})) + 0.5;
  common::HParams hp;
  hp.hidden = 32;
  hp.norm = "layer";
  hp.activation = "silu";
  auto net = MakeModel(hp, ModelShape{{6}, 1});
  EXPECT_EQ(net->forward(x).sizes(), (std::vector<int64_t>{128, 1}));
  const auto [first, last] = FitSteps(*net, x, y, /*steps=*/150);
  EXPECT_LT(last, 0.3 * first);
}

TEST(ZooTest, CnnWithoutBatchNormHasConvBiases) {
  common::HParams hp;
  hp.model = "cnn";
  hp.channels = 8;
  hp.depth = 2;
  hp.batch_norm = false;
  auto net = MakeModel(hp, ModelShape{{3, 16, 16}, 10});
  EXPECT_EQ(net->named_buffers().size(), 0u);
  EXPECT_EQ(CountParameters(*net), (3 * 9 * 8 + 8) + (8 * 9 * 16 + 16) + LinearParams(16, 10));
  hp.batch_norm = true;
  EXPECT_EQ(CountParameters(*MakeModel(hp, ModelShape{{3, 16, 16}, 10})),
            3 * 9 * 8 + 2 * 8 + 8 * 9 * 16 + 2 * 16 + LinearParams(16, 10));
}

TEST(ZooTest, CnnTrainsWithEveryPoolingActivationAndNorm) {
  for (const std::string pooling : {"max", "avg"}) {
    for (const std::string activation : {"relu", "gelu", "tanh"}) {
      for (bool batch_norm : {true, false}) {
        common::HParams hp;
        hp.model = "cnn";
        hp.channels = 8;
        hp.depth = 2;
        hp.kernel_size = 5;
        hp.pooling = pooling;
        hp.activation = activation;
        hp.batch_norm = batch_norm;
        ExpectTrains(hp, ModelShape{{3, 12, 12}, 10},
                     pooling + "/" + activation + "/" + (batch_norm ? "bn" : "no bn"));
      }
    }
  }
}

// Average pooling is a different model from max pooling, not a label on the same one.
TEST(ZooTest, CnnPoolingChangesTheOutput) {
  auto [x, y] = Images({3, 12, 12});
  common::HParams hp;
  hp.model = "cnn";
  hp.channels = 8;
  torch::manual_seed(1);
  auto max = MakeModel(hp, ModelShape{{3, 12, 12}, 10});
  hp.pooling = "avg";
  torch::manual_seed(1);
  auto avg = MakeModel(hp, ModelShape{{3, 12, 12}, 10});
  max->eval();
  avg->eval();
  EXPECT_GT((max->forward(x) - avg->forward(x)).abs().max().item<double>(), 1e-4);
}

// ResNet-20 at channels 16, blocks 3, stages 3: 0.27 M parameters (He et al., table 6; here
// with 1x1 projection shortcuts, 3 k more than their parameter-free ones).
TEST(ZooTest, ResNetHasResNet20sParameterCount) {
  common::HParams hp;
  hp.model = "resnet";
  hp.channels = 16;
  hp.blocks = 3;
  hp.stages = 3;
  auto net = MakeModel(hp, ModelShape{{3, 32, 32}, 10});
  // Stem conv + bn; per stage 3 blocks of two 3x3 convs + bns; 1x1 projections into stages 2, 3.
  int64_t expected = 3 * 9 * 16 + 2 * 16;
  int64_t in = 16;
  for (int64_t width : {16, 32, 64}) {
    for (int b = 0; b < 3; ++b) {
      expected += in * 9 * width + 2 * width + width * 9 * width + 2 * width;
      if (in != width) expected += in * width + 2 * width;
      in = width;
    }
  }
  expected += LinearParams(64, 10);
  EXPECT_EQ(CountParameters(*net), expected);
  EXPECT_NEAR(expected, 0.27e6, 0.01e6);
  auto x = torch::randn({2, 3, 32, 32});
  EXPECT_EQ(net->forward(x).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST(ZooTest, ResNetTrainsOnColourAndGreyImages) {
  common::HParams hp;
  hp.model = "resnet";
  hp.channels = 4;
  hp.blocks = 1;
  hp.stages = 2;
  ExpectTrains(hp, ModelShape{{3, 32, 32}, 10}, "32x32 colour", /*n=*/16);
  hp.batch_norm = false;
  hp.activation = "gelu";
  hp.stages = 3;
  ExpectTrains(hp, ModelShape{{1, 28, 28}, 10}, "28x28 grey, no batch norm", /*n=*/16);
}

TEST(ZooTest, ImageModelsOnRowsAreAClearError) {
  for (const std::string model : {"cnn", "resnet"}) {
    common::HParams hp;
    hp.model = model;
    try {
      MakeModel(hp, ModelShape{{12}, 2});
      FAIL() << model << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "model: " + model +
                                           " needs image samples [channels, height, width], got "
                                           "[12]; use mlp for rows of features");
    }
  }
}

}  // namespace zoo_models_test
}  // namespace sift::worker

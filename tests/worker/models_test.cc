#include "worker/trainer/models.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sift::worker {
namespace models_test {

common::HParams SmallCnn() {
  common::HParams hp;
  hp.model = "cnn";
  hp.channels = 8;
  hp.depth = 2;
  hp.kernel_size = 3;
  return hp;
}

bool ChannelsLast(const torch::Tensor& t) {
  return t.dim() == 4 && t.is_contiguous(at::MemoryFormat::ChannelsLast);
}

TEST(ModelsTest, CnnConvolutionWeightsAreChannelsLast) {
  torch::manual_seed(1);
  auto model = MakeModel(SmallCnn());
  int convs = 0;
  for (const auto& p : model->named_parameters()) {
    if (p.value().dim() != 4) continue;
    ++convs;
    // NHWC strides, also for conv1's single input channel (where NCHW would pass for NHWC).
    EXPECT_EQ(p.value().stride(1), 1) << p.key();
    EXPECT_TRUE(ChannelsLast(p.value())) << p.key();
  }
  EXPECT_EQ(convs, 2);
}

// A checkpoint of channels-last weights loads back bitwise, in channels-last layout.
TEST(ModelsTest, CnnSaveLoadRoundTripsBitwiseAndLayout) {
  torch::manual_seed(1);
  auto saved = MakeModel(SmallCnn());
  std::stringstream buffer;
  torch::serialize::OutputArchive out;
  saved->save(out);
  out.save_to(buffer);

  torch::manual_seed(2);  // other initial values, overwritten by the load
  auto loaded = MakeModel(SmallCnn());
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  loaded->load(in);
  auto a = saved->named_parameters(), b = loaded->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].value(), b[i].value())) << a[i].key();
    EXPECT_EQ(a[i].value().strides(), b[i].value().strides()) << a[i].key();
  }
  for (const auto& p : loaded->named_parameters()) {
    if (p.value().dim() == 4) {
      EXPECT_EQ(p.value().stride(1), 1) << p.key();
    }
  }
}

// Pool-then-ReLU (the model's order) against ReLU-then-pool (the textbook order): the same
// outputs and input gradients bit for bit, ties and all-negative windows included.
TEST(ModelsTest, MaxPoolAndReluCommuteExactly) {
  torch::manual_seed(3);
  // Coarse values make ties and all-negative 2x2 windows common.
  auto x = torch::randint(-3, 3, {4, 8, 6, 6}).to(torch::kFloat32);
  x = x.contiguous(at::MemoryFormat::ChannelsLast);
  auto upstream = torch::randn({4, 8, 3, 3});
  auto a = x.clone().requires_grad_(true);
  auto b = x.clone().requires_grad_(true);
  auto ya = torch::max_pool2d(a, 2).relu_();
  auto yb = torch::max_pool2d(torch::relu(b), 2);
  ya.backward(upstream);
  yb.backward(upstream);
  EXPECT_TRUE(torch::equal(ya, yb));
  EXPECT_TRUE(torch::equal(a.grad(), b.grad()));
}

}  // namespace models_test
}  // namespace sift::worker

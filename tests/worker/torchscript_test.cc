// model: torchscript and init_from: a scripted module trained by the Trainer like a built-in one.
#include "tests/worker/torchscript_test.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/worker/model_state.h"
#include "tests/worker/test_util.h"
#include "worker/trainer/torchscript_model.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace torchscript_test {

class TorchScriptTest : public ::testing::Test {
 protected:
  // Written once for the suite: python3 starting with torch takes seconds.
  static void SetUpTestSuite() {
    if (!testing::HavePythonTorch()) return;
    dir_ = new testing::TempDir;
    const auto out = [](const std::string& name) { return ", out='" + (*dir_ / name) + "'"; };
    ASSERT_TRUE(testing::ExportModels(
        {"'mlp', 16" + out("mlp_16.pt"), "'mlp', 32" + out("mlp_32.pt"),
         "'mlp', 16, seed=7" + out("pretrained.pt"), "'cnn', 4" + out("cnn.pt")}));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!testing::HavePythonTorch()) GTEST_SKIP() << testing::kNoPythonTorch;
  }

  static std::string File(const std::string& name) { return *dir_ / name; }

  // The 784-16-8-10 scripted MLP, Adam, batch 64: four quick epochs on 512 images.
  static TrainerOptions Options() {
    TrainerOptions o = testing::SmallMlp(/*seed=*/3);
    o.hp.model = "torchscript";
    o.hp.path = File("mlp_16.pt");
    return o;
  }

  static testing::TempDir* dir_;
};

testing::TempDir* TorchScriptTest::dir_ = nullptr;

using testing::ExpectBitwiseEqual;

TEST_F(TorchScriptTest, TrainsUnderTheModulesOwnNames) {
  auto data = testing::SmallFashionMnist(/*train=*/1024, /*val=*/256, /*test=*/64);
  Trainer t(Options(), data);
  std::vector<std::string> names;
  for (const auto& p : t.model().named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                             "head.weight", "head.bias"}));
  EpochMetrics m;
  for (int e = 0; e < 3; ++e) m = t.TrainEpoch();
  EXPECT_GT(m.val_accuracy, 0.6);  // chance is 0.1
}

// params counts the scripted module's parameters as torch does: export_model.py's 784-16-8-10
// MLP, and its CNN of width 4 (bias-free 3x3 convolutions 1->4->8, batch norm, an 8->10 head).
TEST_F(TorchScriptTest, ReportsTheModulesParameterCountAndInferenceTime) {
  auto data = testing::SmallFashionMnist(/*train=*/256, /*val=*/64, /*test=*/64);
  const EpochMetrics mlp = Trainer(Options(), data).TrainEpoch();
  EXPECT_EQ(mlp.params, (784 * 16 + 16) + (16 * 8 + 8) + (8 * 10 + 10));
  EXPECT_GT(mlp.inference_ms, 0.0);
  EXPECT_TRUE(std::isfinite(mlp.inference_ms));
  TrainerOptions cnn = Options();
  cnn.hp.path = File("cnn.pt");
  EXPECT_EQ(Trainer(cnn, data).TrainEpoch().params,
            1 * 4 * 9 + 2 * 4 + 4 * 8 * 9 + 2 * 8 + (8 * 10 + 10));
}

// Uninterrupted == stopped mid-epoch, checkpointed, resumed by a new Trainer: bitwise, with the
// module's own dropout drawing from the trainer's generator. The CNN (batch norm buffers) runs
// in bf16 autocast with gradient accumulation.
TEST_F(TorchScriptTest, ResumesFromACheckpointBitwise) {
  auto data = testing::SmallFashionMnist(/*train=*/512, /*val=*/64, /*test=*/64);
  TrainerOptions mlp = Options();
  mlp.hp.attributes["dropout_p"] = 0.25;
  mlp.hp.lr_schedule = "cosine";
  TrainerOptions cnn = Options();
  cnn.hp.path = File("cnn.pt");
  cnn.hp.attributes["dropout_p"] = 0.1;
  cnn.hp.precision = "bf16";
  cnn.hp.micro_batch = 32;
  cnn.hp.optimizer = "sgd";
  cnn.hp.lr = 0.05;
  for (const auto& o : {mlp, cnn}) {
    SCOPED_TRACE(o.hp.path);
    testing::TempDir dir;
    Trainer straight(o, data);
    EpochMetrics a, b;
    for (int e = 0; e < 3; ++e) a = straight.TrainEpoch();
    {
      Trainer first(o, data);
      first.TrainEpoch();
      std::atomic<bool> stop{true};
      EXPECT_FALSE(first.TrainEpoch(&stop).completed);
      first.SaveCheckpoint(dir / "ckpt");
    }
    Trainer resumed(o, data);
    resumed.LoadCheckpoint(dir / "ckpt");
    EXPECT_EQ(resumed.step_in_epoch(), 1);
    for (int e = 0; e < 2; ++e) b = resumed.TrainEpoch();
    ExpectBitwiseEqual(straight, resumed);
    EXPECT_EQ(a.train_loss, b.train_loss);
    EXPECT_EQ(a.val_loss, b.val_loss);
    EXPECT_EQ(a.val_accuracy, b.val_accuracy);
  }
}

TEST_F(TorchScriptTest, SetsAttributesAndPicksTheFileByParameter) {
  common::HParams hp = Options().hp;
  hp.path = File("mlp_{width}.pt");
  hp.attributes = {{"width", int64_t{32}}, {"dropout_p", 0.5}};
  auto net = MakeTorchScriptModel(hp, /*outputs=*/10);
  EXPECT_EQ(net->named_parameters()["fc1.weight"].size(0), 32);  // mlp_32.pt
  const auto x = torch::ones({4, 1, 28, 28});
  net->train();
  EXPECT_FALSE(torch::equal(net->forward(x), net->forward(x)));  // dropout at p = 0.5
  net->eval();
  EXPECT_TRUE(torch::equal(net->forward(x), net->forward(x)));

  hp.attributes["dropout_p"] = 0.0;
  auto plain = MakeTorchScriptModel(hp, 10);
  plain->train();
  EXPECT_TRUE(torch::equal(plain->forward(x), plain->forward(x)));
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(TorchScriptTest, BadFilesAndAttributesAreClearErrors) {
  common::HParams hp = Options().hp;
  const auto make = [&] { MakeTorchScriptModel(hp, 10); };
  hp.path = File("mlp_{width}.pt");
  hp.attributes = {{"width", int64_t{64}}};
  EXPECT_EQ(ErrorOf(make), "path: " + File("mlp_64.pt") + " is not a file (model: torchscript)");
  hp.attributes = {};
  EXPECT_EQ(ErrorOf(make),
            "path: " + File("mlp_{width}.pt") + " names 'width', which this trial does not set");

  hp.path = File("mlp_16.pt");
  hp.attributes = {{"dropout", 0.1}};
  EXPECT_EQ(ErrorOf(make),
            "dropout: not a trainer setting nor an attribute of the module (module " +
                File("mlp_16.pt") + "; settable attributes: dropout_p (float))");
  hp.attributes = {{"dropout_p", std::string("high")}};
  EXPECT_NE(ErrorOf(make).find("dropout_p: 'high' does not fit: the attribute takes a float"),
            std::string::npos);
  hp.attributes = {{"fc1", 1.0}};
  EXPECT_NE(ErrorOf(make).find("fc1: is a submodule of the module"), std::string::npos);

  // Output of the wrong width for the data: 10 logits where a regression needs 1.
  auto net = MakeTorchScriptModel(Options().hp, /*outputs=*/1);
  EXPECT_NE(ErrorOf([&] {
              net->forward(torch::ones({2, 1, 28, 28}));
            }).find("forward returned shape [2, 10] for a batch of 2; the data needs [batch, 1]"),
            std::string::npos);
}

TEST_F(TorchScriptTest, InitFromATorchScriptFileCopiesItsWeights) {
  auto data = testing::SmallFashionMnist(/*train=*/512, /*val=*/64, /*test=*/64);
  TrainerOptions o = Options();
  o.hp.init_from = File("pretrained.pt");
  Trainer t(o, data);
  const auto pretrained = torch::jit::load(File("pretrained.pt"));
  const auto own = torch::jit::load(File("mlp_16.pt"));
  for (const auto& p : pretrained.named_parameters()) {
    EXPECT_TRUE(torch::equal(t.model().named_parameters()[p.name], p.value)) << p.name;
  }
  EXPECT_FALSE(torch::equal(t.model().named_parameters()["fc1.weight"],
                            own.attr("fc1").toModule().attr("weight").toTensor()));

  // A built-in model takes a TorchScript file of the same names and shapes too; a mismatch names
  // the tensor.
  o.hp.init_from = File("mlp_32.pt");
  EXPECT_EQ(ErrorOf([&] { Trainer bad(o, data); }),
            "init_from: " + File("mlp_32.pt") +
                ": 'fc1.weight' is [32, 784] there but [16, 784] "
                "in the model");
  o.hp.init_from = File("cnn.pt");
  EXPECT_EQ(ErrorOf([&] { Trainer bad(o, data); }),
            "init_from: " + File("cnn.pt") + " has no tensor 'fc1.weight' that the model has");
  o.hp.init_from = File("missing.ckpt");
  EXPECT_EQ(ErrorOf([&] { Trainer bad(o, data); }),
            "init_from: " + File("missing.ckpt") + " is not a file");
}

TEST_F(TorchScriptTest, InitFromACheckpointStartsAFreshTrialFromItsWeights) {
  auto data = testing::SmallFashionMnist(/*train=*/512, /*val=*/64, /*test=*/64);
  testing::TempDir dir;
  Trainer donor(Options(), data);
  donor.TrainEpoch();
  donor.SaveCheckpoint(dir / "donor.ckpt");
  TrainerOptions o = Options();
  o.hp.init_from = dir / "donor.ckpt";
  o.hp.lr = 1e-4;  // another trial of the search
  Trainer t(o, data);
  EXPECT_EQ(t.epoch(), 0);
  ExpectBitwiseEqual(donor, t);

  // The built-in MLP has the same names, but 64 hidden units: the first misfit is named.
  TrainerOptions builtin = testing::SmallMlp(3);
  builtin.hp.init_from = dir / "donor.ckpt";
  EXPECT_EQ(ErrorOf([&] { Trainer bad(builtin, data); }),
            "init_from: " + (dir / "donor.ckpt") +
                ": 'fc1.weight' is [16, 784] there but [64, 784] in the model");
}

}  // namespace torchscript_test
}  // namespace sift::worker

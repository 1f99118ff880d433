// Exported models: a trained trial's checkpoint becomes TorchScript that LibTorch's and
// PyTorch's torch.jit.load run, predicting what the worker's own model predicts.
#include "worker/trainer/export.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "tests/worker/test_util.h"
#include "worker/trainer/checkpoint.h"
#include "worker/trainer/models.h"

namespace sift::worker {
namespace export_test {

using testing::TempDir;

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-torch installs

// Small [3, 8, 8] images, labels from the sign of each image's mean (four classes used).
std::shared_ptr<const Datasets> SmallImages() {
  torch::manual_seed(7);
  auto split = [](int64_t n) {
    TensorSplit s;
    s.images = torch::randn({n, 3, 8, 8});
    s.labels = (s.images.flatten(1).mean(1) > 0).to(torch::kLong) +
               2 * (s.images.select(1, 0).mean({1, 2}) > 0).to(torch::kLong);
    return s;
  };
  auto d = std::make_shared<Datasets>();
  d->train = split(48);
  d->val = split(32);
  d->test = split(32);
  d->sample = {3, 8, 8};
  d->outputs = 4;
  return d;
}

struct Case {
  std::string name;
  search::Params params;
};

std::vector<Case> Cases() {
  return {
      {"mlp", {{"model", "mlp"}, {"hidden", int64_t{32}}, {"dropout", 0.3}}},
      {"mlp_layer_gelu",
       {{"model", "mlp"},
        {"hidden", int64_t{48}},
        {"depth", int64_t{3}},
        {"taper", 0.75},
        {"norm", "layer"},
        {"activation", "gelu"},
        {"width3", int64_t{20}}}},
      {"mlp_batch_silu",
       {{"model", "mlp"}, {"hidden", int64_t{32}}, {"norm", "batch"}, {"activation", "silu"}}},
      {"cnn", {{"model", "cnn"}, {"channels", int64_t{8}}, {"depth", int64_t{2}}}},
      {"cnn_avg_tanh_nobn",
       {{"model", "cnn"},
        {"channels", int64_t{8}},
        {"kernel_size", int64_t{5}},
        {"pooling", "avg"},
        {"activation", "tanh"},
        {"batch_norm", "false"}}},
      {"resnet",
       {{"model", "resnet"}, {"channels", int64_t{8}}, {"blocks", int64_t{1}}, {"dropout", 0.2}}},
      {"resnet_gelu_nobn",
       {{"model", "resnet"},
        {"channels", int64_t{4}},
        {"stages", int64_t{2}},
        {"activation", "gelu"},
        {"batch_norm", "false"}}},
  };
}

void WriteFloats(const std::string& path, const torch::Tensor& t) {
  auto c = t.contiguous();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(c.data_ptr<float>()), c.numel() * sizeof(float));
}

torch::Tensor ReadFloats(const std::string& path, std::vector<int64_t> shape) {
  const std::string bytes = testing::ReadFile(path);
  auto t = torch::empty(shape);
  EXPECT_EQ(bytes.size(), t.numel() * sizeof(float)) << path;
  if (bytes.size() == t.numel() * sizeof(float))
    std::memcpy(t.data_ptr<float>(), bytes.data(), bytes.size());
  return t;
}

bool PythonTorchAvailable() {
  return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

// Each case trains an epoch (batch-norm statistics move), checkpoints, exports; the exported
// module's predictions on held-out samples match the worker's model in eval mode, in LibTorch
// here and in PyTorch (python3-torch) where installed.
TEST(ExportTest, TrainedModelsRoundTripThroughTorchScript) {
  TempDir dir;
  auto data = SmallImages();
  const torch::Tensor inputs = data->test.images;
  std::string manifest;
  std::vector<torch::Tensor> expected;
  for (const auto& c : Cases()) {
    SCOPED_TRACE(c.name);
    TrainerOptions o;
    ASSERT_EQ(common::ParseHParams(c.params, &o.hp), "");
    o.hp.batch_size = 16;
    o.hp.batch_size_auto = false;  // this batch, not one chosen from the data
    o.max_epochs = 1;
    o.seed = 3;
    Trainer t(o, data);
    t.TrainEpoch();
    const std::string ckpt = dir / (c.name + ".ckpt"), out = dir / (c.name + ".pt");
    t.SaveCheckpoint(ckpt);
    const ExportedModel m = ExportCheckpoint(ckpt, out);
    EXPECT_EQ(m.hp.model, o.hp.model);
    EXPECT_EQ(m.shape.sample, data->sample);

    auto& net = dynamic_cast<Net&>(t.model());
    net.eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor want = net.forward(inputs);
    ASSERT_EQ(want.sizes(), (std::vector<int64_t>{32, 4}));
    torch::jit::Module loaded = torch::jit::load(out);
    const torch::Tensor got = loaded.forward({inputs}).toTensor();
    testing::ExpectMaxRelError(got, want, 1e-5, c.name + " in LibTorch", /*min_scale=*/1.0);
    // Same parameter names as the worker's model.
    std::vector<std::string> names, want_names;
    for (const auto& p : loaded.named_parameters()) names.push_back(p.name);
    for (const auto& p : net.named_parameters()) want_names.push_back(p.key());
    EXPECT_EQ(names, want_names);
    manifest += c.name + "\n";
    expected.push_back(want);
  }

  if (!PythonTorchAvailable()) {
    GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch): the exports "
                    "were checked in LibTorch only, not in PyTorch";
  }
  WriteFloats(dir / "inputs.bin", inputs);
  testing::WriteFile(dir / "manifest.txt", manifest);
  testing::WriteFile(dir / "predict.py", R"(
import sys, torch
d = sys.argv[1]
x = torch.frombuffer(bytearray(open(d + '/inputs.bin', 'rb').read()), dtype=torch.float32)
x = x.reshape(32, 3, 8, 8)
for name in open(d + '/manifest.txt').read().split():
    m = torch.jit.load(d + '/' + name + '.pt')
    m.eval()
    with torch.no_grad():
        y = m(x)
    open(d + '/' + name + '.out', 'wb').write(y.contiguous().numpy().tobytes())
)");
  const std::string cmd = std::string(kPython) + " " + (dir / "predict.py") + " " + dir.path() +
                          " 2>" + (dir / "python.err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::ReadFile(dir / "python.err");
  const auto cases = Cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const torch::Tensor got = ReadFloats(dir / (cases[i].name + ".out"), {32, 4});
    testing::ExpectMaxRelError(got, expected[i], 1e-5, cases[i].name + " in PyTorch",
                               /*min_scale=*/1.0);
  }
}

TEST(ExportTest, CheckpointWithoutAModelIsAClearError) {
  TempDir dir;
  torch::serialize::OutputArchive a;
  WriteString(a, "fingerprint", "model=mlp");
  WriteCheckpointFile(dir / "old.ckpt", a);
  try {
    ExportCheckpoint(dir / "old.ckpt", dir / "old.pt");
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot export " + (dir / "old.ckpt") +
                                         ": it does not record its model"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ExportCheckpoint(dir / "missing.ckpt", dir / "m.pt"), CheckpointError);
}

TEST(ExportTest, ModelSpecRoundTrips) {
  common::HParams hp;
  ASSERT_EQ(common::ParseHParams({{"model", "mlp"},
                                  {"width2", int64_t{77}},
                                  {"taper", 0.6},
                                  {"norm", "layer"},
                                  {"batch_norm", "false"}},
                                 &hp),
            "");
  common::HParams back;
  ModelShape shape;
  ParseModelSpec(ModelSpecJson(hp, ModelShape{{5}, 1}), &back, &shape);
  EXPECT_EQ(common::ModelParams(back), common::ModelParams(hp));
  EXPECT_EQ(shape.sample, (std::vector<int64_t>{5}));
  EXPECT_EQ(shape.outputs, 1);
  EXPECT_TRUE(shape.input.mean.empty()) << "no preparation recorded: none applied";
  EXPECT_THROW(ParseModelSpec("{\"params\": {\"model\": \"rnn\"}}", &back, &shape),
               std::runtime_error);

  ModelShape csv{{3}, 2};
  csv.class_names = {"no", "yes"};
  csv.input = {"csv", {{"age", {}}, {"color", {"blue", "red"}}}, 1.0, {40, 0, 0}, {12, 1, 1}};
  ParseModelSpec(ModelSpecJson(hp, csv), &back, &shape);
  EXPECT_EQ(shape.class_names, csv.class_names);
  EXPECT_EQ(shape.input.format, "csv");
  ASSERT_EQ(shape.input.columns.size(), 2u);
  EXPECT_EQ(shape.input.columns[1].vocabulary, (std::vector<std::string>{"blue", "red"}));
  EXPECT_EQ(shape.input.mean, csv.input.mean);
  EXPECT_EQ(shape.input.std, csv.input.std);
  csv.input.std.pop_back();
  try {
    ParseModelSpec(ModelSpecJson(hp, csv), &back, &shape);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "model spec: input mean and std have 3 and 2 values for samples of 3 features");
  }
}

}  // namespace export_test
}  // namespace sift::worker

// An exported model takes the data as the user has it: raw csv rows (numbers in their own units,
// text columns one-hot encoded as the sidecar lists them) and raw IDX pixels (0 to 255), and
// predicts what the worker's model predicts on the data the worker prepared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/data/idx.h"
#include "common/data_files.h"
#include "tests/worker/test_util.h"
#include "worker/trainer/data.h"
#include "worker/trainer/export.h"
#include "worker/trainer/models.h"
#include "worker/trainer/torchscript_export.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace export_input_test {

using testing::TempDir;
using testing::WriteFile;

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-torch installs

// Rows of a csv whose label sits between its features: height (cm) and income (dollars), far
// from zero and of very different scales, and a text column. kind is "tall" or "short" by a
// rule over all three, so a model fed unstandardized numbers would predict nonsense.
struct Table {
  std::vector<std::string> header{"height", "kind", "color", "income"};
  std::vector<std::vector<std::string>> rows;
  std::string Csv() const {
    std::string text = "height,kind,color,income\n";
    for (const auto& r : rows) text += r[0] + "," + r[1] + "," + r[2] + "," + r[3] + "\n";
    return text;
  }
};

Table People(int n, int offset) {
  static const char* kColors[] = {"red", "green", "blue"};
  Table t;
  for (int k = 0; k < n; ++k) {
    const int i = k + offset;
    const double height = 170 + 12 * std::sin(i * 1.3), income = 50000 + 20000 * std::cos(i * 0.7);
    const std::string color = kColors[(i * 7) % 3];
    const double score =
        (height - 170) / 12 + (income - 50000) / 20000 + (color == "red" ? 0.8 : -0.4);
    t.rows.push_back(
        {std::to_string(height), score > 0 ? "tall" : "short", color, std::to_string(income)});
  }
  return t;
}

// The rows of `t` as the model's input, encoded as docs/workloads.md says from the sidecar:
// its columns in order, a number as it is, a text column one-hot over its vocabulary.
torch::Tensor EncodeRows(const Table& t, const nlohmann::json& sidecar) {
  std::vector<float> x;
  for (const auto& row : t.rows) {
    for (const auto& column : sidecar.at("columns")) {
      const auto at = std::find(t.header.begin(), t.header.end(), column.at("name"));
      const std::string& cell = row[static_cast<size_t>(at - t.header.begin())];
      if (!column.contains("one_hot")) {
        x.push_back(std::stof(cell));
        continue;
      }
      for (const auto& value : column.at("one_hot")) x.push_back(value == cell ? 1.0f : 0.0f);
    }
  }
  const auto n = static_cast<int64_t>(t.rows.size());
  return torch::tensor(x).reshape({n, static_cast<int64_t>(x.size()) / n});
}

// The worker's own model in eval mode on the data as the worker prepared it.
torch::Tensor WorkerOutputs(Trainer& t, const torch::Tensor& prepared) {
  auto& net = dynamic_cast<Net&>(t.model());
  net.eval();
  torch::NoGradGuard no_grad;
  return net.forward(prepared);
}

TEST(ExportInputTest, TakesRawCsvRowsEncodedPerTheSidecar) {
  TempDir dir;
  const Table train = People(240, 0), val = People(60, 1000), test = People(80, 2000);
  WriteFile(dir / "train.csv", train.Csv());
  WriteFile(dir / "val.csv", val.Csv());
  WriteFile(dir / "test.csv", test.Csv());
  CachedDataSpec spec;
  spec.train.path = dir / "train.csv";
  spec.val.path = dir / "val.csv";
  spec.test.path = dir / "test.csv";
  spec.label = "kind";
  spec.cache_dir = dir / "cache";
  LoadDatasets(spec);  // writes the cache entry; the trial reads it back, as a worker's would
  const auto data = LoadDatasets(spec);
  ASSERT_TRUE(data->from_cache);

  TrainerOptions o = testing::SmallMlp(/*seed=*/4);
  o.hp.hidden = 16;
  o.hp.batch_size = 16;
  o.hp.batch_size_auto = false;
  Trainer t(o, data);
  for (int e = 0; e < 3; ++e) t.TrainEpoch();
  t.SaveCheckpoint(dir / "trial.ckpt");
  ExportCheckpoint(dir / "trial.ckpt", dir / "model.pt");

  const auto sidecar = nlohmann::json::parse(testing::ReadFile(dir / "model.json"));
  EXPECT_EQ(sidecar.at("task"), "classification");
  EXPECT_EQ(sidecar.at("classes"), (std::vector<std::string>{"short", "tall"}));
  EXPECT_EQ(sidecar.at("input_shape"), (std::vector<int64_t>{5}));
  EXPECT_EQ(sidecar.at("columns").dump(),
            R"([{"name":"height"},{"name":"color","one_hot":["blue","green","red"]},)"
            R"({"name":"income"}])");

  const torch::Tensor raw = EncodeRows(test, sidecar);
  torch::jit::Module module = torch::jit::load(dir / "model.pt");
  const torch::Tensor got = module.forward({raw}).toTensor();
  const torch::Tensor want = WorkerOutputs(t, data->test.images);
  testing::ExpectMaxRelError(got, want, 1e-5, "raw rows through the export", /*min_scale=*/1.0);
  // Its predicted class names against the csv's own labels: the accuracy Sift reports.
  const auto predicted = got.argmax(1);
  int64_t correct = 0;
  for (size_t i = 0; i < test.rows.size(); ++i) {
    correct += sidecar.at("classes")[predicted[static_cast<int64_t>(i)].item<int64_t>()] ==
               test.rows[i][1];
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(test.rows.size());
  EXPECT_DOUBLE_EQ(accuracy, t.TestMetrics().at("test_accuracy"));
  EXPECT_GT(accuracy, 0.75) << "the rule is learnable: a model that learned nothing proves little";

  if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch): checked in "
                    "LibTorch only, not with docs/workloads.md's snippet in PyTorch";
  }
  // docs/workloads.md's snippet, as a user runs it on the test csv.
  WriteFile(dir / "predict.py", R"(
import csv, json, sys, torch
d = sys.argv[1]
side = json.load(open(d + '/model.json'))
model = torch.jit.load(d + '/model.pt')

def encode(row):
    x = []
    for col in side['columns']:
        if 'one_hot' in col:
            x += [1.0 if row[col['name']] == v else 0.0 for v in col['one_hot']]
        else:
            x.append(float(row[col['name']]))
    return x

rows = list(csv.DictReader(open(d + '/test.csv')))
with torch.no_grad():
    logits = model(torch.tensor([encode(r) for r in rows]))
names = [side['classes'][i] for i in logits.argmax(1).tolist()]
print(sum(n == r['kind'] for n, r in zip(names, rows)) / len(rows))
)");
  const std::string cmd = std::string(kPython) + " " + (dir / "predict.py") + " " + dir.path() +
                          " >" + (dir / "python.out") + " 2>" + (dir / "python.err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::ReadFile(dir / "python.err");
  EXPECT_NEAR(std::stod(testing::ReadFile(dir / "python.out")), accuracy, 1e-12);
}

// IDX images: the module takes the file's pixels (uint8, 0 to 255, [N, 28, 28]) and scores the
// test images as the worker's test evaluation does.
TEST(ExportInputTest, TakesRawIdxPixels) {
  TempDir dir;
  const auto data = testing::SmallFashionMnist(/*train=*/2048, /*val=*/256, /*test=*/512);
  TrainerOptions o = testing::SmallMlp(/*seed=*/6);
  Trainer t(o, data);
  t.TrainEpoch();
  t.SaveCheckpoint(dir / "trial.ckpt");
  ExportCheckpoint(dir / "trial.ckpt", dir / "model.pt");
  const auto sidecar = nlohmann::json::parse(testing::ReadFile(dir / "model.json"));
  EXPECT_EQ(sidecar.at("input_dtype"), "uint8");
  EXPECT_EQ(sidecar.at("classes").size(), 10u);
  EXPECT_FALSE(sidecar.contains("columns"));

  const char* env = std::getenv("SIFT_DATA_DIR");
  const std::string folder = env ? env : CachedDataSpec().dir;
  const data::IdxArray images = data::ReadIdxFile(folder + "/" + common::kTestImages);
  const data::IdxArray labels = data::ReadIdxFile(folder + "/" + common::kTestLabels);
  const int64_t n = data->test.size();
  const torch::Tensor pixels =
      torch::from_blob(const_cast<uint8_t*>(images.data.data()), {n, 28, 28}, torch::kUInt8);
  torch::jit::Module module = torch::jit::load(dir / "model.pt");
  const torch::Tensor got = module.forward({pixels}).toTensor();
  testing::ExpectMaxRelError(got, WorkerOutputs(t, data->test.images), 1e-5,
                             "raw pixels through the export", /*min_scale=*/1.0);
  const torch::Tensor truth =
      torch::from_blob(const_cast<uint8_t*>(labels.data.data()), {n}, torch::kUInt8)
          .to(torch::kLong);
  const double accuracy = got.argmax(1).eq(truth).to(torch::kDouble).mean().item<double>();
  EXPECT_DOUBLE_EQ(accuracy, t.TestMetrics().at("test_accuracy"));
}

}  // namespace export_input_test
}  // namespace sift::worker

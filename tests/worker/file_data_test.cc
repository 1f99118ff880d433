// The worker on csv/npy/npz data: tensors of the data's shape, the content-keyed cache, and
// the trainer on a regression and a many-class classification.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/common/data_files.h"
#include "worker/trainer/data.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace file_data_test {

using sift::data::testing::Npy;
using sift::data::testing::TempDir;
using sift::data::testing::WriteFile;
using sift::data::testing::Zip;

// y = 3a - 2b + 1 (+ a small deterministic wobble) over a grid of a, b and a text column.
std::string LinearCsv(int n) {
  std::string text = "a,b,kind,y\n";
  for (int i = 0; i < n; ++i) {
    const double a = (i % 17) / 8.0 - 1.0, b = (i % 13) / 6.0 - 1.0;
    const double y = 3 * a - 2 * b + 1 + 0.01 * std::sin(i);
    text += std::to_string(a) + "," + std::to_string(b) + "," + (i % 3 ? "p" : "q") + "," +
            std::to_string(y) + "\n";
  }
  return text;
}

CachedDataSpec CsvSpec(const std::string& path, const std::string& cache_dir) {
  CachedDataSpec spec;
  spec.file.path = path;
  spec.label = "y";
  spec.cache_dir = cache_dir;
  return spec;
}

TEST(FileDataTest, CsvBecomesRowsAndFloatTargetsAndIsCached) {
  TempDir dir;
  WriteFile(dir / "d.csv", LinearCsv(200));
  const CachedDataSpec spec = CsvSpec(dir / "d.csv", dir / "cache");
  auto first = LoadDatasets(spec);
  EXPECT_EQ(first->task, "regression");
  EXPECT_EQ(first->outputs, 1);
  EXPECT_EQ(first->sample, (std::vector<int64_t>{4}));  // a, b, kind=p, kind=q
  EXPECT_EQ(first->train.images.sizes(), (std::vector<int64_t>{first->train.size(), 4}));
  EXPECT_EQ(first->train.labels.scalar_type(), torch::kFloat32);
  EXPECT_EQ(first->train.size() + first->val.size() + first->test.size(), 200);
  EXPECT_FALSE(first->from_cache);
  auto second = LoadDatasets(spec);
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->task, "regression");
  EXPECT_EQ(second->sample, first->sample);
  EXPECT_TRUE(torch::equal(second->val.images, first->val.images));
  EXPECT_TRUE(torch::equal(second->test.labels, first->test.labels));
}

TEST(FileDataTest, AChangedFileOrPreprocessingIsNeverServedStale) {
  TempDir dir;
  WriteFile(dir / "d.csv", LinearCsv(100));
  CachedDataSpec spec = CsvSpec(dir / "d.csv", dir / "cache");
  const std::string before = DatasetCachePath(spec);
  auto original = LoadDatasets(spec);
  // The same file elsewhere shares the entry: the cache keys on bytes, not paths.
  {
    std::ifstream in(dir / "d.csv", std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    WriteFile(dir / "copy.csv", bytes.str());
  }
  EXPECT_EQ(DatasetCachePath(CsvSpec(dir / "copy.csv", dir / "cache")), before);
  // Other preprocessing: another entry.
  CachedDataSpec scaled = spec;
  scaled.standardize = "none";
  EXPECT_NE(DatasetCachePath(scaled), before);
  // An edited file (same name, same size): another entry, and the new values.
  std::string text = LinearCsv(100);
  const size_t at = text.find('\n') + 1;  // first row's first digit
  text[at] = text[at] == '0' ? '1' : '0';
  WriteFile(dir / "d.csv", text);
  EXPECT_NE(DatasetCachePath(spec), before);
  EXPECT_NE(DataContentKey(spec), DataContentKey(scaled));
  auto edited = LoadDatasets(spec);
  EXPECT_FALSE(edited->from_cache);
  const bool same = torch::equal(edited->train.images, original->train.images) &&
                    torch::equal(edited->val.images, original->val.images) &&
                    torch::equal(edited->test.images, original->test.images);
  EXPECT_FALSE(same);
}

TEST(FileDataTest, NpzImagesKeepTheirShapeAndGainAChannel) {
  TempDir dir;
  std::vector<uint8_t> x(12 * 6 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i % 251);
  std::vector<int64_t> y(12);
  for (int i = 0; i < 12; ++i) y[i] = i % 4;
  WriteFile(dir / "d.npz", Zip({{"x.npy", Npy<uint8_t>("|u1", {12, 6, 6}, x)},
                                {"y.npy", Npy<int64_t>("<i8", {12}, y)}},
                               /*deflate=*/false));
  CachedDataSpec spec;
  spec.train.path = spec.val.path = dir / "d.npz";
  auto d = LoadDatasets(spec);
  EXPECT_EQ(d->task, "classification");
  EXPECT_EQ(d->outputs, 4);
  EXPECT_EQ(d->sample, (std::vector<int64_t>{1, 6, 6}));
  EXPECT_EQ(d->train.images.sizes(), (std::vector<int64_t>{12, 1, 6, 6}));
  EXPECT_EQ(d->train.labels.scalar_type(), torch::kInt64);
  // A CNN trains on it: the model's input and output sizes come from the data.
  TrainerOptions o;
  o.hp.model = "cnn";
  o.hp.channels = 4;
  o.hp.depth = 1;
  o.hp.batch_size = 4;
  o.max_epochs = 1;
  Trainer t(o, d);
  EXPECT_TRUE(t.TrainEpoch().completed);
}

TEST(FileDataTest, RegressionTrainsWithMseAndReportsRmseMaeR2) {
  TempDir dir;
  WriteFile(dir / "d.csv", LinearCsv(600));
  CachedDataSpec spec = CsvSpec(dir / "d.csv", "");
  spec.standardize = "both";
  auto data = LoadDatasets(spec);
  TrainerOptions o;
  o.hp.model = "mlp";
  o.hp.hidden = 32;
  o.hp.depth = 1;
  o.hp.batch_size = 32;
  o.hp.lr = 1e-2;
  o.max_epochs = 15;
  o.seed = 3;
  Trainer t(o, data);
  EpochMetrics first = t.TrainEpoch(), m = first;
  while (t.epoch() < o.max_epochs) m = t.TrainEpoch();
  EXPECT_TRUE(m.regression);
  EXPECT_EQ(m.val_accuracy, 0.0);
  EXPECT_NEAR(m.val_rmse * m.val_rmse, m.val_loss, 1e-6 * (1 + m.val_loss));  // loss is the MSE
  EXPECT_LT(m.val_rmse, first.val_rmse);
  EXPECT_LE(m.val_mae, m.val_rmse + 1e-9);  // always, for any errors
  EXPECT_GT(m.val_r2, 0.9);                 // the targets are nearly linear in the features
  const auto test = t.TestMetrics();
  EXPECT_EQ(test.count("test_accuracy"), 0u);
  EXPECT_GT(test.at("test_r2"), 0.9);
  EXPECT_GT(test.at("test_rmse"), 0.0);
}

TEST(FileDataTest, CnnOnRowsIsAClearError) {
  TempDir dir;
  WriteFile(dir / "d.csv", LinearCsv(50));
  TrainerOptions o;
  o.hp.model = "cnn";
  try {
    Trainer t(o, LoadDatasets(CsvSpec(dir / "d.csv", "")));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cnn needs image samples"), std::string::npos) << e.what();
  }
}

// Huber loss trains the same model on the same data to a different loss; rmse and r2 are still
// the squared error's, so the two runs stay comparable by val_rmse.
TEST(FileDataTest, HuberLossIsTheTrainingLossAndRmseStaysTheSquaredErrors) {
  TempDir dir;
  WriteFile(dir / "d.csv", LinearCsv(300));
  CachedDataSpec spec = CsvSpec(dir / "d.csv", "");
  spec.standardize = "both";
  auto data = LoadDatasets(spec);
  TrainerOptions o;
  o.hp.hidden = 16;
  o.hp.depth = 1;
  o.hp.batch_size = 32;
  o.hp.lr = 1e-2;
  o.max_epochs = 3;
  o.seed = 4;
  Trainer mse(o, data);
  o.hp.loss = "huber";
  o.hp.huber_delta = 0.5;
  Trainer huber(o, data);
  EpochMetrics a, b, b_first;
  for (int e = 0; e < 3; ++e) {
    a = mse.TrainEpoch();
    b = huber.TrainEpoch();
    if (e == 0) b_first = b;
  }
  EXPECT_NEAR(a.val_rmse * a.val_rmse, a.val_loss, 1e-6 * (1 + a.val_loss));
  // Huber is below half the squared error wherever errors pass delta: never equal to the MSE.
  EXPECT_LT(b.val_loss, 0.5 * b.val_rmse * b.val_rmse + 1e-9);
  EXPECT_NE(a.train_loss, b.train_loss);
  EXPECT_LT(b.val_rmse, b_first.val_rmse);  // it learns
  // A classification model cannot train on it.
  TrainerOptions c;
  c.hp.loss = "huber";
  std::string rows = "a,y\n";
  for (int i = 0; i < 40; ++i) rows += std::to_string(i) + (i % 2 ? ",p\n" : ",q\n");
  WriteFile(dir / "c.csv", rows);
  try {
    Trainer t(c, LoadDatasets(CsvSpec(dir / "c.csv", "")));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("loss: huber is for regression"), std::string::npos);
  }
}

}  // namespace file_data_test
}  // namespace sift::worker

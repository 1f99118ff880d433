// Regression on a target far from zero: fitted standardized, scored and exported in the target's
// own units; the batch size a trial gets when none is set; and the classification scores beside
// accuracy (balanced accuracy, macro F1, ROC AUC) as the trainer reports them.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cmath>
#include <string>

#include "tests/worker/test_util.h"
#include "worker/trainer/data.h"
#include "worker/trainer/export.h"
#include "worker/trainer/models.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace target_scale_test {

using testing::TempDir;
using testing::WriteFile;

// 300 rows of y = 1000 + 40a - 25b (+ a small wobble): a target whose mean is far from zero.
std::string PriceCsv() {
  std::string text = "a,b,y\n";
  for (int i = 0; i < 300; ++i) {
    const double a = (i % 17) / 8.0 - 1.0, b = (i % 13) / 6.0 - 1.0;
    text += std::to_string(a) + "," + std::to_string(b) + "," +
            std::to_string(1000 + 40 * a - 25 * b + 2 * std::sin(i)) + "\n";
  }
  return text;
}

std::shared_ptr<const Datasets> Prices(const TempDir& dir, const std::string& standardize = "") {
  WriteFile(dir / "p.csv", PriceCsv());
  CachedDataSpec spec;
  spec.file.path = dir / "p.csv";
  spec.label = "y";
  spec.split = {0.2, 0.2, 1};
  spec.standardize = standardize;
  return LoadDatasets(spec);
}

TrainerOptions Small() {
  TrainerOptions o;
  o.hp.hidden = 16;
  o.hp.depth = 1;
  o.hp.batch_size = 16;
  o.hp.lr = 1e-2;
  o.hp.precision = "fp32";  // the hand-made figures below are fp32's, whatever the CPU has
  o.seed = 5;
  return o;
}

// Trains until `epochs` are done; the last epoch's metrics.
EpochMetrics TrainTo(Trainer& t, int64_t epochs) {
  EpochMetrics m;
  while (t.epoch() < epochs) m = t.TrainEpoch();
  return m;
}

// What a model that always predicts `value` scores on `y`: (rmse, mae), by hand.
std::pair<double, double> ConstantScores(const torch::Tensor& y, double value) {
  double squared = 0, absolute = 0;
  const auto v = y.to(torch::kFloat64);
  for (int64_t i = 0; i < v.size(0); ++i) {
    const double e = value - v[i].item<double>();
    squared += e * e;
    absolute += std::fabs(e);
  }
  return {std::sqrt(squared / v.size(0)), absolute / v.size(0)};
}

TEST(TargetScaleTest, AnUntrainedHeadPredictsTheTrainingMeanInTheTargetsUnits) {
  TempDir dir;
  auto data = Prices(dir);  // the default: features and target standardized
  const double train_mean = data->train.labels.to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(data->target_mean, train_mean, 1e-9 * train_mean);
  EXPECT_NEAR(data->target_std, data->train.labels.to(torch::kFloat64).std(false).item<double>(),
              1e-9 * data->target_std);
  Trainer t(Small(), data);
  auto params = t.model().named_parameters();
  EXPECT_EQ(params["head.bias"].abs().max().item<double>(), 0.0) << "the head starts at the mean";
  {
    torch::NoGradGuard no_grad;
    params["head.weight"].zero_();  // output 0 in the fitted scale: the training mean
  }
  const auto m = t.TestMetrics();
  const auto [rmse, mae] = ConstantScores(data->test.labels, data->target_mean);
  EXPECT_NEAR(m.at("test_rmse"), rmse, 1e-9 * rmse);
  EXPECT_NEAR(m.at("test_mae"), mae, 1e-9 * mae);
  EXPECT_LT(m.at("test_rmse"), 50) << "predicting ~1000, not 0";

  // Without the target standardized the same model predicts 0.
  auto raw = Prices(dir, "features");
  EXPECT_EQ(raw->target_mean, 0.0);
  Trainer u(Small(), raw);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : u.model().named_parameters()) {
      if (p.key().rfind("head.", 0) == 0) p.value().zero_();
    }
  }
  EXPECT_NEAR(u.TestMetrics().at("test_rmse"), ConstantScores(raw->test.labels, 0).first, 1e-6);
}

TEST(TargetScaleTest, FittedStandardizedScoredAndExportedInTheTargetsUnits) {
  TempDir dir;
  auto data = Prices(dir);
  TrainerOptions o = Small();
  o.max_epochs = 12;
  Trainer t(o, data);
  const EpochMetrics m = TrainTo(t, o.max_epochs);
  EXPECT_GT(m.val_r2, 0.9);
  // val_loss is the squared error in the target's units, like val_rmse.
  EXPECT_NEAR(m.val_rmse * m.val_rmse, m.val_loss, 1e-5 * m.val_loss);
  // The reported rmse is that of output * std + mean, worked out here from the model itself.
  auto& net = dynamic_cast<Net&>(t.model());
  net.eval();
  torch::Tensor predicted;
  {
    torch::NoGradGuard no_grad;
    predicted = net.forward(data->val.images).squeeze(1).to(torch::kFloat64) * data->target_std +
                data->target_mean;
  }
  const auto error = predicted - data->val.labels.to(torch::kFloat64);
  const double rmse = error.square().mean().sqrt().item<double>();
  EXPECT_NEAR(m.val_rmse, rmse, 1e-6 * rmse);
  // The exported module predicts in the target's units too.
  t.SaveCheckpoint(dir / "t.ckpt");
  const ExportedModel e = ExportCheckpoint(dir / "t.ckpt", dir / "t.pt");
  EXPECT_EQ(e.shape.target_mean, data->target_mean);
  EXPECT_EQ(e.shape.target_std, data->target_std);
  torch::jit::Module loaded = torch::jit::load(dir / "t.pt");
  // It takes the features in their own units (it standardizes them itself): undo the loader's.
  const auto stat = [](const std::vector<double>& v) { return torch::tensor(v, torch::kFloat64); };
  const torch::Tensor raw =
      data->val.images.to(torch::kFloat64) * stat(data->input.std) + stat(data->input.mean);
  const torch::Tensor exported = loaded.forward({raw}).toTensor().squeeze(1);
  testing::ExpectMaxRelError(exported.to(torch::kFloat64), predicted, 1e-6, "exported");
}

TEST(TargetScaleTest, ResumingAStandardizedRegressionIsBitwiseIdentical) {
  TempDir dir;
  auto data = Prices(dir);
  TrainerOptions o = Small();
  o.max_epochs = 3;
  Trainer whole(o, data);
  const EpochMetrics want = TrainTo(whole, 3);
  Trainer first(o, data);
  first.TrainEpoch();
  first.SaveCheckpoint(dir / "e1.ckpt");
  Trainer resumed(o, Prices(dir));  // the data read again: the same scale, from the same rows
  resumed.LoadCheckpoint(dir / "e1.ckpt");
  const EpochMetrics got = TrainTo(resumed, 3);
  EXPECT_EQ(got.train_loss, want.train_loss);
  EXPECT_EQ(got.val_rmse, want.val_rmse);
  EXPECT_EQ(got.val_loss, want.val_loss);
}

TEST(TargetScaleTest, NoBatchSizeSetGivesATenthOfTheTrainingRows) {
  TempDir dir;
  auto data = Prices(dir);
  ASSERT_EQ(data->train.size(), 180);
  TrainerOptions o;
  ASSERT_EQ(common::ParseHParams({{"hidden", int64_t{16}}}, &o.hp), "");
  Trainer t(o, data);
  EXPECT_EQ(t.batch_size(), 16);       // 18 -> 16
  EXPECT_EQ(t.steps_per_epoch(), 12);  // ceil(180 / 16), not 2 of 128
  ASSERT_EQ(common::ParseHParams({{"batch_size", int64_t{128}}}, &o.hp), "");
  EXPECT_EQ(Trainer(o, data).batch_size(), 128);  // a batch size set is kept
}

// Two classes, one a fifth of the rows; then three classes.
std::shared_ptr<const Datasets> Classes(const TempDir& dir, int classes) {
  std::string text = "a,b,y\n";
  for (int i = 0; i < 200; ++i) {
    const int c = classes == 2 ? (i % 5 == 0) : i % 3;
    text += std::to_string(c + 0.8 * std::sin(i * 1.3)) + "," + std::to_string(std::cos(i)) + "," +
            "k" + std::to_string(c) + "\n";
  }
  WriteFile(dir / "c.csv", text);
  CachedDataSpec spec;
  spec.file.path = dir / "c.csv";
  spec.label = "y";
  return LoadDatasets(spec);
}

TEST(TargetScaleTest, ClassificationReportsBalancedAccuracyMacroF1AndBinaryRocAuc) {
  TempDir dir;
  for (int classes : {2, 3}) {
    SCOPED_TRACE(classes);
    auto data = Classes(dir, classes);
    TrainerOptions o = Small();
    Trainer t(o, data);
    const EpochMetrics m = t.TrainEpoch();
    EXPECT_GT(m.val_balanced_accuracy, 0.0);
    EXPECT_LE(m.val_balanced_accuracy, 1.0);
    EXPECT_GT(m.val_macro_f1, 0.0);
    const auto test = t.TestMetrics();
    // Balanced accuracy is the mean of the per-class recalls the counts give, keyed by the
    // classes' names.
    double recalls = 0;
    for (int k = 0; k < classes; ++k) {
      const std::string prefix = "test_class_k" + std::to_string(k);
      recalls += test.at(prefix + "_correct") / test.at(prefix + "_total");
    }
    EXPECT_NEAR(test.at("test_balanced_accuracy"), recalls / classes, 1e-12);
    EXPECT_TRUE(test.count("test_macro_f1"));
    if (classes == 2) {
      EXPECT_GT(m.val_roc_auc, 0.5);  // the feature separates them, if not perfectly
      EXPECT_LE(m.val_roc_auc, 1.0);
      EXPECT_TRUE(test.count("test_roc_auc"));
    } else {
      EXPECT_TRUE(std::isnan(m.val_roc_auc));
      EXPECT_FALSE(test.count("test_roc_auc"));
    }
  }
}

}  // namespace target_scale_test
}  // namespace sift::worker

// The config's `data:` section: the idx folder form, csv/npy/npz files, splits, encoding, and
// the checks `sift validate` makes on the files themselves.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/data/validate.h"
#include "tests/common/data_files.h"

namespace sift::common {
namespace data_config_test {

using sift::data::testing::TempDir;
using sift::data::testing::WriteFile;

std::vector<std::string> Parse(const std::string& data, common::StudyConfig* out,
                               const std::string& objective = "") {
  const std::string text = "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n" +
                           objective + "data: " + data + "\n";
  return common::ParseStudyConfig(text, "study.yaml", out);
}

TEST(DataConfig, TheIdxFolderFormIsUnchanged) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{dir: /data/fmnist, train_limit: 4096, val_size: 1000}", &c).empty());
  EXPECT_TRUE(c.data.is_idx());
  EXPECT_EQ(c.data.dir, "/data/fmnist");
  EXPECT_EQ(c.data.train_limit, 4096);
  EXPECT_EQ(c.data.val_size, 1000);
}

TEST(DataConfig, ReadsACsvWithSplitAndEncoding) {
  common::StudyConfig c;
  const auto errors = Parse(
      "{file: data/x.csv.gz, label: target, features: [a, b], missing: mean, standardize: true, "
      "split: {val: 0.2, test: 0.1, seed: 9}, task: classification}",
      &c);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(c.data.ResolvedFormat(), "csv");
  EXPECT_EQ(c.data.file.path, "data/x.csv.gz");
  EXPECT_EQ(c.data.label, "target");
  EXPECT_EQ(c.data.features, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.data.missing, "mean");
  EXPECT_EQ(c.data.standardize, "both");
  EXPECT_EQ(c.data.split.val, 0.2);
  EXPECT_EQ(c.data.split.test, 0.1);
  EXPECT_EQ(c.data.split.seed, 9u);
}

// `standardize:` names what it covers; true and false are both and none; unset is the default.
TEST(DataConfig, StandardizeNamesWhatItCovers) {
  common::StudyConfig c;
  for (const auto& [given, want] :
       std::vector<std::pair<std::string, std::string>>{{"features", "features"},
                                                        {"target", "target"},
                                                        {"both", "both"},
                                                        {"none", "none"},
                                                        {"true", "both"},
                                                        {"false", "none"}}) {
    ASSERT_TRUE(Parse("{file: d.csv, label: y, standardize: " + given + "}", &c).empty()) << given;
    EXPECT_EQ(c.data.standardize, want) << given;
  }
  ASSERT_TRUE(Parse("{file: d.csv, label: y}", &c).empty());
  EXPECT_EQ(c.data.standardize, "");
  EXPECT_TRUE(c.data.StandardizesFeatures(/*rows=*/true));
  EXPECT_TRUE(c.data.StandardizesTarget());
  EXPECT_EQ(Parse("{file: d.csv, label: y, standardize: labels}", &c),
            (std::vector<std::string>{"data.standardize: must be one of true, false, features, "
                                      "target, both, none, got 'labels' (line 4)"}));
}

// `train:` with `split:` and no val file is the one-file form; split beside val files is an error.
TEST(DataConfig, TrainWithSplitIsTheOneFileForm) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{train: f.csv, label: y, split: {val: 0.25, test: 0.1}}", &c).empty());
  EXPECT_EQ(c.data.file.path, "f.csv");
  EXPECT_TRUE(c.data.train.empty());
  EXPECT_EQ(c.data.split.val, 0.25);
  EXPECT_EQ(Parse("{train: t.csv, val: v.csv, label: y, split: {val: 0.2}}", &c),
            (std::vector<std::string>{"data.split: splits one file (data.file); with separate "
                                      "train and val files there is nothing to split (drop "
                                      "data.split) (line 4)"}));
  // Without split, train alone still asks for a validation file.
  EXPECT_EQ(Parse("{train: t.csv, label: y}", &c).size(), 1u);
}

TEST(DataConfig, ReadsNpyPairsAndNpzArrayNames) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{train: {x: tx.npy, y: ty.npy}, val: {x: vx.npy, y: vy.npy}}", &c).empty());
  EXPECT_EQ(c.data.ResolvedFormat(), "npy");
  EXPECT_EQ(c.data.val.labels, "vy.npy");
  ASSERT_TRUE(Parse("{format: npz, file: d.bin, arrays: {x: images, y: labels}}", &c).empty());
  EXPECT_EQ(c.data.x_key, "images");
  EXPECT_EQ(c.data.y_key, "labels");
}

TEST(DataConfig, RegressionMinimisesRmseByDefault) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{file: d.csv, label: y, task: regression}", &c).empty());
  EXPECT_EQ(c.objective.metric, "val_rmse");
  EXPECT_FALSE(c.objective.maximize);
  ASSERT_TRUE(
      Parse("{file: d.csv, label: y, task: regression}", &c, "objective: {metric: val_r2}\n")
          .empty());
  EXPECT_TRUE(c.objective.maximize);
  EXPECT_EQ(
      Parse("{file: d.csv, label: y, task: regression}", &c, "objective: {metric: val_accuracy}\n"),
      (std::vector<std::string>{
          "objective.metric: val_accuracy is for classification; data.task is regression "
          "(use val_rmse, val_mae or val_r2) (line 4)"}));
}

TEST(DataConfig, ProblemsWithTheSpecAreNamed) {
  common::StudyConfig c;
  EXPECT_EQ(Parse("{file: d.csv}", &c),
            (std::vector<std::string>{
                "data.label: missing; name the target column of the CSV (line 4)"}));
  EXPECT_EQ(Parse("{file: d.csv, train: t.csv, label: y}", &c),
            (std::vector<std::string>{"data.file: give either one file (split by data.split) or "
                                      "train/val/test files, not both (line 4)"}));
  EXPECT_EQ(Parse("{file: d.xls, label: y}", &c),
            (std::vector<std::string>{"data.file: cannot tell the format of 'd.xls' from its "
                                      "extension; set data.format: csv | npy | npz (line 4)"}));
  EXPECT_EQ(
      Parse("{file: d.csv, label: y, split: {val: 0}, missing: drop}", &c),
      (std::vector<std::string>{"data.missing: must be one of error, mean, got 'drop' (line 4)"}));
  EXPECT_EQ(Parse("{file: d.csv, label: y, split: {val: 0}}", &c),
            (std::vector<std::string>{"data.split.val: must be in (0, 1), got 0 (line 4)"}));
}

TEST(DataValidation, ANonexistentIdxFolderFails) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{dir: /nonexistent}", &c).empty());  // the config itself is fine
  const auto errors = data::ValidateData(c.data);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0], "data.dir: /nonexistent/train-images-idx3-ubyte.gz: no such readable file");
}

TEST(DataValidation, ReadsTheFilesAndNamesRowAndColumn) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,y\n1,0\n2,1\n");
  WriteFile(dir / "val.csv", "a,y\n1,0\n2,2\n");
  common::StudyConfig c;
  ASSERT_TRUE(
      Parse("{train: " + dir / "train.csv" + ", val: " + dir / "val.csv" + ", label: y}", &c)
          .empty());
  EXPECT_EQ(data::ValidateData(c.data),
            (std::vector<std::string>{"data: " + dir / "val.csv" +
                                      ": line 3, column 'y': label '2' is not a class of the "
                                      "training rows (classes: 0, 1)"}));
  WriteFile(dir / "val.csv", "a,y\n1,0\n2,1\n");
  std::string summary;
  EXPECT_TRUE(common::ValidateStudyData(c, &summary).empty());
  EXPECT_EQ(summary, "csv, classification: 2 classes, 1 features; 2 train, 2 val, 0 test rows");
}

// A CSV study never reads the IDX folder (whose default is Fashion-MNIST's): a machine without
// it must still validate and run CSV studies.
TEST(DataValidation, ACsvStudyDoesNotNeedTheIdxFolder) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,y\n1,0\n2,1\n");
  WriteFile(dir / "val.csv", "a,y\n1,0\n2,1\n");
  common::StudyConfig c;
  ASSERT_TRUE(
      Parse("{train: " + dir / "train.csv" + ", val: " + dir / "val.csv" + ", label: y}", &c)
          .empty());
  c.data.dir = dir / "no-fashion-mnist-here";
  EXPECT_TRUE(common::ValidateStudyData(c).empty());
}

TEST(DataValidation, TheObjectiveMustFitTheInferredTask) {
  TempDir dir;
  std::string text = "a,y\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(i) + "," + std::to_string(i * 0.5) + "\n";
  WriteFile(dir / "d.csv", text);
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{file: " + dir / "d.csv" + ", label: y}", &c).empty());
  EXPECT_EQ(common::ValidateStudyData(c),
            (std::vector<std::string>{
                "objective.metric: val_accuracy, but the label is a regression target (many "
                "distinct numbers); set objective: {metric: val_rmse}, or data.task: "
                "classification"}));
  ASSERT_TRUE(
      Parse("{file: " + dir / "d.csv" + ", label: y}", &c, "objective: {metric: val_rmse}\n")
          .empty());
  EXPECT_TRUE(common::ValidateStudyData(c).empty());
  ASSERT_TRUE(
      Parse("{file: " + dir / "d.csv" + ", label: y}", &c, "objective: {metric: val_macro_f1}\n")
          .empty());
  EXPECT_EQ(common::ValidateStudyData(c).size(), 1u) << "macro F1 is for classes";
}

// Balanced accuracy, macro F1 and ROC AUC are objectives (maximized); ROC AUC needs two classes.
TEST(DataValidation, ImbalanceAwareObjectivesAreAccepted) {
  TempDir dir;
  std::string two = "a,y\n", three = "a,y\n";
  for (int i = 0; i < 40; ++i) {
    two += std::to_string(i) + "," + (i % 5 ? "common" : "rare") + "\n";
    three += std::to_string(i) + "," + std::to_string(i % 3) + "\n";
  }
  WriteFile(dir / "two.csv", two);
  WriteFile(dir / "three.csv", three);
  common::StudyConfig c;
  for (const char* metric : {"val_balanced_accuracy", "val_macro_f1", "val_roc_auc"}) {
    const auto errors = Parse("{file: " + dir / "two.csv" + ", label: y}", &c,
                              "objective: {metric: " + std::string(metric) + "}\n");
    ASSERT_TRUE(errors.empty()) << metric << ": " << errors[0];
    EXPECT_TRUE(c.objective.maximize) << metric;
    EXPECT_TRUE(common::ValidateStudyData(c).empty()) << metric;
  }
  EXPECT_FALSE(Parse("{file: d.csv, label: y}", &c,
                     "objective: {metric: val_roc_auc, direction: minimize}\n")
                   .empty());
  EXPECT_EQ(Parse("{file: d.csv, label: y, task: regression}", &c,
                  "objective: {metric: val_balanced_accuracy}\n"),
            (std::vector<std::string>{
                "objective.metric: val_balanced_accuracy is for classification; data.task is "
                "regression (use val_rmse, val_mae or val_r2) (line 4)"}));
  ASSERT_TRUE(
      Parse("{file: " + dir / "three.csv" + ", label: y}", &c, "objective: {metric: val_roc_auc}\n")
          .empty());
  EXPECT_EQ(common::ValidateStudyData(c),
            (std::vector<std::string>{"objective.metric: val_roc_auc is for two classes, the "
                                      "label has 3; use val_macro_f1 or val_balanced_accuracy"}));
}

// Regression: a regression metric on text classes advised "set data.task: regression", which
// cannot work; the metric is what is wrong.
TEST(DataValidation, ARegressionMetricOnTextClassesNamesTheMetric) {
  TempDir dir;
  std::string text = "a,y\n";
  for (int i = 0; i < 20; ++i) text += std::to_string(i) + "," + (i % 2 ? "cat" : "dog") + "\n";
  WriteFile(dir / "d.csv", text);
  common::StudyConfig c;
  ASSERT_TRUE(Parse("{file: " + dir / "d.csv" + ", label: y}", &c,
                    "objective: {metric: val_rmse, direction: minimize}\n")
                  .empty());
  EXPECT_EQ(common::ValidateStudyData(c),
            (std::vector<std::string>{
                "objective.metric: val_rmse is a regression metric, but the label's classes are "
                "text ('cat'); set objective: {metric: val_accuracy} (or another classification "
                "metric)"}));
}

// Regression: "data.normalize: unknown key" did not point to the key Sift has.
TEST(DataConfig, AnotherToolsWordForAKeyPointsToSifts) {
  common::StudyConfig c;
  const auto errors = Parse("{file: d.csv, label: y, normalize: true}", &c);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "data.normalize: unknown key; did you mean 'standardize'? (line 4)"}));
}

TEST(DataConfig, TheSklearnExamplesValidate) {
  for (const char* name : {"breast_cancer", "diabetes"}) {
    common::StudyConfig c;
    const std::string path = std::string(SIFT_SOURCE_DIR) + "/examples/sklearn/" + name + ".yaml";
    const auto errors = common::LoadStudyConfig(path, &c);
    EXPECT_TRUE(errors.empty()) << path << ": " << (errors.empty() ? "" : errors[0]);
    EXPECT_EQ(c.data.ResolvedFormat(), "csv") << path;
  }
}

TEST(DataConfig, ReadsExplicitIdxFiles) {
  common::StudyConfig c;
  const auto errors = Parse(
      "{format: idx, train: {images: tr-i.gz, labels: tr-l.gz}, test: {images: te-i.gz, labels: "
      "te-l.gz}}",
      &c);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_TRUE(c.data.is_idx());
  EXPECT_FALSE(c.data.uses_dir());
  EXPECT_EQ(c.data.train.path, "tr-i.gz");
  EXPECT_EQ(c.data.test.labels, "te-l.gz");
  EXPECT_EQ(
      Parse("{format: idx, train: {images: a.gz}}", &c),
      (std::vector<std::string>{"data.train.labels: missing; the labels' IDX file (line 4)"}));
}

// Relative data paths are the config file's, wherever `sift` runs from.
TEST(DataConfig, RelativePathsAreTakenFromTheConfigsFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir / "data");
  WriteFile(dir / "data/train.csv", "a,y\n1,0\n2,1\n");
  WriteFile(dir / "data/val.csv", "a,y\n1,0\n2,1\n");
  WriteFile(dir / "study.yaml",
            "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n"
            "data: {train: data/train.csv, val: ./data/val.csv, label: y}\n");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path("/");
  common::StudyConfig c;
  const auto errors = common::LoadStudyConfig(dir / "study.yaml", &c);
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(c.data.train.path, dir / "data/train.csv");
  EXPECT_EQ(c.data.val.path, dir / "data/val.csv");
  EXPECT_TRUE(common::ValidateStudyData(c).empty());
  // Text parsed without a file (a restored study with no recorded origin) keeps them as written.
  ASSERT_TRUE(Parse("{train: data/train.csv, val: data/val.csv, label: y}", &c).empty());
  EXPECT_EQ(c.data.train.path, "data/train.csv");
}

TEST(DataValidation, HuberLossIsForRegression) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,y\n1,0\n2,1\n");
  WriteFile(dir / "val.csv", "a,y\n1,0\n2,1\n");
  common::StudyConfig c;
  const std::string text =
      "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n"
      "trainer: {loss: huber, huber_delta: 0.5}\n"
      "data: {train: " +
      dir / "train.csv" + ", val: " + dir / "val.csv" + ", label: y}\n";
  ASSERT_TRUE(common::ParseStudyConfig(text, "s.yaml", &c).empty());
  EXPECT_EQ(common::ValidateStudyData(c),
            (std::vector<std::string>{"trainer.loss: huber is for regression; a classification "
                                      "study trains on cross-entropy (drop trainer.loss, or set "
                                      "data.task: regression)"}));
  std::string bad = text;
  bad.replace(bad.find("huber,"), 6, "l1,");
  EXPECT_NE(
      common::ParseStudyConfig(bad, "s.yaml", &c).at(0).find("loss: 'l1' is not one of mse, huber"),
      std::string::npos);
}

}  // namespace data_config_test
}  // namespace sift::common

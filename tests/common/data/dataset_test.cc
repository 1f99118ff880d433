#include "common/data/dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "tests/common/data_files.h"

namespace sift::data {
namespace dataset_test {

using testing::Gzip;
using testing::Npy;
using testing::TempDir;
using testing::WriteFile;
using testing::Zip;

// A csv of `n` rows: x = i, label a for even rows and b for odd ones.
std::string TwoClassCsv(int n) {
  std::string text = "x,label\n";
  for (int i = 0; i < n; ++i) text += std::to_string(i) + "," + (i % 2 ? "b" : "a") + "\n";
  return text;
}

// Raw values unless a test asks for standardisation (the default standardizes both).
DataSpec CsvFile(const std::string& path, const std::string& label = "label") {
  DataSpec s;
  s.file.path = path;
  s.label = label;
  s.standardize = "none";
  return s;
}

DataSpec CsvFiles(const std::string& train, const std::string& val, const std::string& label) {
  DataSpec s;
  s.train.path = train;
  s.val.path = val;
  s.label = label;
  s.standardize = "none";
  return s;
}

std::string ErrorOf(const DataSpec& spec) {
  try {
    LoadDataset(spec);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

int64_t Count(const std::vector<int64_t>& v, int64_t x) {
  return std::count(v.begin(), v.end(), x);
}

TEST(DatasetTest, SplitsOneFileStratifiedAndReproducibly) {
  TempDir dir;
  WriteFile(dir / "d.csv", TwoClassCsv(40));
  DataSpec spec = CsvFile(dir / "d.csv");
  spec.split = {0.25, 0.25, 7};
  const Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.task, "classification");
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d.feature_shape, (std::vector<int64_t>{1}));
  ASSERT_EQ(d.train.size, 20);
  ASSERT_EQ(d.val.size, 10);
  ASSERT_EQ(d.test.size, 10);
  for (const Split* s : {&d.train, &d.val, &d.test}) {  // each class in proportion
    EXPECT_EQ(Count(s->classes, 0), s->size / 2);
  }
  // Every row lands in exactly one split, its label travelling with it.
  std::vector<float> all;
  for (const Split* s : {&d.train, &d.val, &d.test}) {
    for (int64_t i = 0; i < s->size; ++i) {
      all.push_back(s->x[i]);
      EXPECT_EQ(s->classes[i], static_cast<int64_t>(s->x[i]) % 2);
    }
  }
  std::sort(all.begin(), all.end());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(all[i], i);
  // The same seed splits the same way; another seed does not.
  EXPECT_EQ(LoadDataset(spec).val.x, d.val.x);
  spec.split.seed = 8;
  EXPECT_NE(LoadDataset(spec).val.x, d.val.x);
}

TEST(DatasetTest, OneHotVocabularyComesFromTraining) {
  TempDir dir;
  WriteFile(dir / "train.csv", "size,color,y\n1,red,0\n2,green,1\n3,red,0\n");
  WriteFile(dir / "val.csv", "color,y,size\nblue,1,4\ngreen,0,5\n");  // columns in another order
  const Dataset d = LoadDataset(CsvFiles(dir / "train.csv", dir / "val.csv", "y"));
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"size", "color=green", "color=red"}));
  EXPECT_EQ(d.train.x, (std::vector<float>{1, 0, 1, 2, 1, 0, 3, 0, 1}));
  // blue was never seen in training: no position set; columns found by name.
  EXPECT_EQ(d.val.x, (std::vector<float>{4, 0, 0, 5, 1, 0}));
  EXPECT_EQ(d.val.classes, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(d.test.size, 0);
}

TEST(DatasetTest, FeaturesSelectColumns) {
  TempDir dir;
  WriteFile(dir / "d.csv", "id,a,b,y\n1,10,20,0\n2,11,21,1\n3,12,22,0\n4,13,23,1\n");
  DataSpec spec = CsvFiles(dir / "d.csv", dir / "d.csv", "y");
  spec.features = {"b", "a"};
  const Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(std::vector<float>(d.train.x.begin(), d.train.x.begin() + 2),
            (std::vector<float>{20, 10}));
  spec.features = {"a", "c"};
  EXPECT_EQ(ErrorOf(spec), dir / "d.csv" + ": no column 'c' (a feature); columns: id, a, b, y");
}

TEST(DatasetTest, MissingValuesAreErrorsOrTrainingMeans) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,b,y\n1,x,0\n3,,1\n5,y,0\n");
  WriteFile(dir / "val.csv", "a,b,y\nNA,x,1\n");
  DataSpec spec = CsvFiles(dir / "train.csv", dir / "val.csv", "y");
  EXPECT_EQ(ErrorOf(spec), dir / "train.csv" +
                               ": line 3, column 'b': missing value (set data.missing: mean to "
                               "impute it)");
  spec.missing = "mean";
  const Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.val.x, (std::vector<float>{3, 1, 0}));  // a: training mean (1+3+5)/3
  EXPECT_EQ(d.train.x[4], 0.0f);                      // b missing: no category
  EXPECT_EQ(d.train.x[5], 0.0f);
}

TEST(DatasetTest, StandardizesWithTrainingStatisticsOnly) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,c,y\n1,u,0\n3,v,1\n");
  WriteFile(dir / "val.csv", "a,c,y\n5,u,1\n");
  DataSpec spec = CsvFiles(dir / "train.csv", dir / "val.csv", "y");
  for (const char* covering : {"features", "both", ""}) {  // "": the default, both
    spec.standardize = covering;
    const Dataset d = LoadDataset(spec);
    // mean 2, population sd 1; one-hot columns stay 0/1.
    EXPECT_EQ(d.train.x, (std::vector<float>{-1, 1, 0, 1, 0, 1})) << covering;
    EXPECT_EQ(d.val.x, (std::vector<float>{3, 1, 0})) << covering;
    EXPECT_EQ(d.target_mean, 0.0) << "a classification label has no target scale";
    EXPECT_EQ(d.target_std, 1.0);
  }
  spec.standardize = "target";
  EXPECT_EQ(LoadDataset(spec).train.x, (std::vector<float>{1, 1, 0, 3, 0, 1}));
}

// What an export needs to take raw rows: the columns in order with their vocabularies, and the
// standardization of each encoded feature (identity for one-hot ones).
TEST(DatasetTest, RecordsTheInputPreparation) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,c,y\n1,v,0\n3,u,1\n");
  WriteFile(dir / "val.csv", "a,c,y\n5,u,1\n");
  DataSpec spec = CsvFiles(dir / "train.csv", dir / "val.csv", "y");
  spec.standardize = "";
  Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.input.format, "csv");
  ASSERT_EQ(d.input.columns.size(), 2u);
  EXPECT_EQ(d.input.columns[0].name, "a");
  EXPECT_TRUE(d.input.columns[0].vocabulary.empty());
  EXPECT_EQ(d.input.columns[1].name, "c");
  EXPECT_EQ(d.input.columns[1].vocabulary, (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(d.input.divisor, 1.0);
  EXPECT_EQ(d.input.mean, (std::vector<double>{2, 0, 0}));
  EXPECT_EQ(d.input.std, (std::vector<double>{1, 1, 1}));
  spec.standardize = "none";
  d = LoadDataset(spec);
  EXPECT_TRUE(d.input.mean.empty() && d.input.std.empty()) << "nothing to undo";
  EXPECT_EQ(d.input.columns.size(), 2u);
}

// The target's scale comes from the training rows alone; the targets themselves stay in their
// units (the trainer fits them standardized and maps predictions back).
TEST(DatasetTest, TargetScaleIsTheTrainingRowsMeanAndDeviation) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,y\n1,100.5\n2,102.5\n3,97.5\n4,99.5\n");
  WriteFile(dir / "val.csv", "a,y\n5,1000.25\n");
  DataSpec spec = CsvFiles(dir / "train.csv", dir / "val.csv", "y");
  spec.task = "regression";
  for (const char* covering : {"target", "both", ""}) {
    spec.standardize = covering;
    const Dataset d = LoadDataset(spec);
    EXPECT_DOUBLE_EQ(d.target_mean, 100.0) << covering;  // (100.5+102.5+97.5+99.5)/4
    // deviations 0.5, 2.5, -2.5, -0.5: population variance (0.25+6.25+6.25+0.25)/4 = 3.25
    EXPECT_DOUBLE_EQ(d.target_std, std::sqrt(3.25)) << covering;
    EXPECT_EQ(d.train.targets, (std::vector<float>{100.5f, 102.5f, 97.5f, 99.5f}));
    EXPECT_EQ(d.val.targets, (std::vector<float>{1000.25f}));
  }
  for (const char* covering : {"features", "none"}) {
    spec.standardize = covering;
    const Dataset d = LoadDataset(spec);
    EXPECT_EQ(d.target_mean, 0.0) << covering;
    EXPECT_EQ(d.target_std, 1.0) << covering;
  }
  // A constant target: nothing to scale by.
  WriteFile(dir / "train.csv", "a,y\n1,7.5\n2,7.5\n");
  spec.standardize = "target";
  EXPECT_EQ(LoadDataset(spec).target_std, 1.0);
  EXPECT_EQ(LoadDataset(spec).target_mean, 7.5);
}

TEST(DatasetTest, ErrorsNameFileRowAndColumn) {
  TempDir dir;
  WriteFile(dir / "train.csv", "a,y\n1,cat\n2,dog\n");
  WriteFile(dir / "val.csv", "a,y\n1,cat\n2,bird\n");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "train.csv", dir / "val.csv", "y")),
            dir / "val.csv" +
                ": line 3, column 'y': label 'bird' is not a class of the training rows "
                "(classes: cat, dog)");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "train.csv", dir / "val.csv", "target")),
            dir / "train.csv" + ": no column 'target' (data.label); columns: a, y");
  WriteFile(dir / "val.csv", "a,y\nabc,cat\n");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "train.csv", dir / "val.csv", "y")),
            dir / "val.csv" +
                ": line 2, column 'a': 'abc' is not a number (the column is numeric in the "
                "training rows)");
  WriteFile(dir / "val.csv", "a,y\n1,cat\n2\n");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "train.csv", dir / "val.csv", "y")),
            dir / "val.csv" + ": line 3: has 1 fields, the header has 2");
  WriteFile(dir / "val.csv", "a,y\n");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "train.csv", dir / "val.csv", "y")),
            dir / "val.csv" + ": no rows");
  EXPECT_EQ(ErrorOf(CsvFiles(dir / "nope.csv", dir / "val.csv", "y")),
            dir / "nope.csv" + ": cannot open: no such file");
}

TEST(DatasetTest, AnEmptySplitIsAnError) {
  TempDir dir;
  WriteFile(dir / "d.csv", "x,y\n1,0.5\n2,1.5\n3,2.5\n");
  EXPECT_EQ(ErrorOf(CsvFile(dir / "d.csv", "y")),
            dir / "d.csv" +
                ": data.split.val 0.15 of 3 rows leaves the val split empty; use more rows or a "
                "larger fraction");
}

TEST(DatasetTest, InfersTheTaskFromTheLabel) {
  TempDir dir;
  std::string text = "x,y\n";
  for (int i = 0; i < 30; ++i) text += std::to_string(i) + "," + std::to_string(i * 7) + "\n";
  WriteFile(dir / "ints.csv", text);  // 30 distinct integers: regression
  Dataset d = LoadDataset(CsvFile(dir / "ints.csv", "y"));
  EXPECT_EQ(d.task, "regression");
  EXPECT_EQ(d.num_outputs(), 1);
  EXPECT_TRUE(d.train.classes.empty());
  for (int64_t i = 0; i < d.train.size; ++i) EXPECT_EQ(d.train.targets[i], d.train.x[i] * 7);

  WriteFile(dir / "frac.csv", "x,y\n1,0.5\n2,1\n3,0.5\n4,1\n5,1\n6,0.5\n7,1\n");
  EXPECT_EQ(LoadDataset(CsvFiles(dir / "frac.csv", dir / "frac.csv", "y")).task, "regression");

  WriteFile(dir / "few.csv", "x,y\n1,3\n2,1\n3,3\n4,1\n5,3\n6,1\n7,10\n");
  d = LoadDataset(CsvFiles(dir / "few.csv", dir / "few.csv", "y"));
  EXPECT_EQ(d.task, "classification");
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"1", "3", "10"}));  // numeric order
  EXPECT_EQ(d.train.classes[6], 2);

  DataSpec spec = CsvFiles(dir / "few.csv", dir / "few.csv", "y");
  spec.task = "regression";
  EXPECT_EQ(LoadDataset(spec).train.targets[6], 10.0f);

  WriteFile(dir / "text.csv", "x,y\n1,low\n");
  spec = CsvFiles(dir / "text.csv", dir / "text.csv", "y");
  spec.task = "regression";
  EXPECT_EQ(ErrorOf(spec), dir / "text.csv" +
                               ": line 2, column 'y': label 'low' is not a number (task: "
                               "regression)");
}

TEST(DatasetTest, ReadsGzippedCsv) {
  TempDir dir;
  WriteFile(dir / "d.csv.gz", Gzip(TwoClassCsv(20)));
  const Dataset d = LoadDataset(CsvFile(dir / "d.csv.gz"));
  EXPECT_EQ(d.train.size + d.val.size + d.test.size, 20);
}

TEST(DatasetTest, ReadsNpyPairsKeepingTheSampleShape) {
  TempDir dir;
  std::vector<uint8_t> x(6 * 2 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i);
  WriteFile(dir / "x.npy", Npy<uint8_t>("|u1", {6, 2, 3}, x));
  WriteFile(dir / "y.npy", Npy<int64_t>("<i8", {6}, {0, 1, 2, 0, 1, 2}));
  DataSpec spec;
  spec.train = {dir / "x.npy", dir / "y.npy"};
  spec.val = spec.train;
  const Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.task, "classification");
  EXPECT_EQ(d.feature_shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d.num_outputs(), 3);
  EXPECT_EQ(d.train.x[6 * 5 + 5], 35.0f);
  EXPECT_EQ(d.val.classes, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));

  WriteFile(dir / "y.npy", Npy<int64_t>("<i8", {5}, {0, 1, 2, 0, 1}));
  EXPECT_EQ(ErrorOf(spec), dir / "y.npy" + ": 5 labels for 6 samples in " + dir / "x.npy");
}

TEST(DatasetTest, ReadsNpzWithNamedArraysAndImputesNaN) {
  TempDir dir;
  const float nan = std::nanf("");
  const std::string npz =
      Zip({{"images.npy",
            Npy<float>("<f4", {4, 1, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, nan, 4, 4, 4, 4})},
           {"target.npy", Npy<double>("<f8", {4}, {0.5, 1.5, 2.5, 3.5})}},
          /*deflate=*/true);
  WriteFile(dir / "d.npz", npz);
  DataSpec spec;
  spec.train.path = spec.val.path = dir / "d.npz";
  spec.x_key = "images";
  spec.y_key = "target";
  EXPECT_EQ(ErrorOf(spec),
            dir / "d.npz" +
                ": row 2, feature 3: missing value (NaN; set data.missing: mean to impute it)");
  spec.missing = "mean";
  const Dataset d = LoadDataset(spec);
  EXPECT_EQ(d.task, "regression");
  EXPECT_EQ(d.feature_shape, (std::vector<int64_t>{1, 2, 2}));
  EXPECT_FLOAT_EQ(d.train.x[11], (1 + 2 + 4) / 3.0f);
  EXPECT_EQ(d.val.targets, (std::vector<float>{0.5, 1.5, 2.5, 3.5}));
  spec.y_key = "y";
  EXPECT_EQ(ErrorOf(spec), dir / "d.npz" + ": has no array 'y' (arrays: images, target)");
}

}  // namespace dataset_test
}  // namespace sift::data

#include "common/data/data_spec.h"

#include <gtest/gtest.h>

namespace sift::data {
namespace {

TEST(DataSpecTest, FormatComesFromTheExtension) {
  EXPECT_EQ(FormatFromExtension("a/b.csv"), "csv");
  EXPECT_EQ(FormatFromExtension("b.csv.gz"), "csv");
  EXPECT_EQ(FormatFromExtension("b.npz"), "npz");
  EXPECT_EQ(FormatFromExtension("b.npy.gz"), "npy");
  EXPECT_EQ(FormatFromExtension("b.txt"), "");
  DataSpec s;
  EXPECT_EQ(s.ResolvedFormat(), "idx");  // the old `dir:` form stays the default
  EXPECT_EQ(s.SourceFiles().size(), 4u);
  s.file.path = "d.tsv";
  s.format = "csv";
  EXPECT_EQ(s.ResolvedFormat(), "csv");
}

TEST(DataSpecTest, JsonRoundTripsEveryField) {
  DataSpec s;
  s.format = "npy";
  s.train = {"x.npy", "y.npy"};
  s.val = {"vx.npy", "vy.npy"};
  s.split = {0.2, 0.1, 42};
  s.task = "regression";
  s.features = {"a", "b"};
  s.missing = "mean";
  s.standardize = true;
  s.x_key = "images";
  const std::string json = ToJson(s);
  EXPECT_EQ(ToJson(DataSpecFromJson(json)), json);
  EXPECT_EQ(DataSpecFromJson(json).val.labels, "vy.npy");
  EXPECT_THROW(DataSpecFromJson("{\"format\": 1}"), std::runtime_error);
}

TEST(DataSpecTest, ChecksTheSpecBeforeReadingFiles) {
  DataSpec s;
  s.file.path = "d.csv";
  s.train.path = "t.csv";
  EXPECT_EQ(CheckDataSpec(s), (std::vector<std::string>{
                                  "data.file: give either one file (split by data.split) or "
                                  "train/val/test files, not both",
                                  "data.label: missing; name the target column of the CSV"}));
  s = DataSpec{};
  s.train.path = "t.npy";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{
                "data.val: missing; a study needs a validation set to score trials",
                "data.train: npy data needs two files: {x: features.npy, y: labels.npy}"}));
  s = DataSpec{};
  s.file.path = "d.parquet";
  EXPECT_EQ(CheckDataSpec(s), (std::vector<std::string>{
                                  "data.file: cannot tell the format of 'd.parquet' from its "
                                  "extension; set data.format: csv | npy | npz"}));
  s = DataSpec{};
  s.file.path = "d.npz";
  s.split.val = 0.6;
  s.split.test = 0.5;
  s.task = "ranking";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{"data.split: val + test must leave rows to train on",
                                      "data.task: must be classification or regression, got 'ranking'"}));
}

}  // namespace
}  // namespace sift::data

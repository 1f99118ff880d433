#include "common/data/data_spec.h"

#include <gtest/gtest.h>

namespace sift::data {
namespace data_spec_test {

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
  s.standardize = "target";
  s.x_key = "images";
  const std::string json = ToJson(s);
  EXPECT_EQ(ToJson(DataSpecFromJson(json)), json);
  EXPECT_EQ(DataSpecFromJson(json).val.labels, "vy.npy");
  EXPECT_EQ(DataSpecFromJson(json).standardize, "target");
  // An older coordinator's true/false.
  const std::string field = "\"standardize\":\"target\"";
  std::string old = json;
  EXPECT_EQ(DataSpecFromJson(old.replace(old.find(field), field.size(), "\"standardize\":true"))
                .standardize,
            "both");
  old = json;
  EXPECT_EQ(DataSpecFromJson(old.replace(old.find(field), field.size(), "\"standardize\":false"))
                .standardize,
            "none");
  EXPECT_THROW(DataSpecFromJson("{\"format\": 1}"), std::runtime_error);
}

TEST(DataSpecTest, ChecksTheSpecBeforeReadingFiles) {
  DataSpec s;
  s.file.path = "d.csv";
  s.train.path = "t.csv";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{"data.file: give either one file (split by data.split) or "
                                      "train/val/test files, not both",
                                      "data.label: missing; name the target column of the CSV"}));
  s = DataSpec{};
  s.train.path = "t.npy";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{
                "data.val: missing; a study needs a validation set to score trials",
                "data.train: npy data needs two files: {x: features.npy, y: labels.npy}"}));
  s = DataSpec{};
  s.file.path = "d.csv";
  s.label = "y";
  s.standardize = "yes";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{"data.standardize: must be features, target, both (true) or "
                                      "none (false), got 'yes'"}));
  s = DataSpec{};
  s.file.path = "d.parquet";
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{"data.file: cannot tell the format of 'd.parquet' from its "
                                      "extension; set data.format: csv | npy | npz"}));
  s = DataSpec{};
  s.file.path = "d.npz";
  s.split.val = 0.6;
  s.split.test = 0.5;
  s.task = "ranking";
  EXPECT_EQ(
      CheckDataSpec(s),
      (std::vector<std::string>{"data.split: val + test must leave rows to train on",
                                "data.task: must be classification or regression, got 'ranking'"}));
}

TEST(DataSpecTest, IdxFilesAreNamedExplicitlyOrByFolder) {
  EXPECT_EQ(FormatFromExtension("train-images-idx3-ubyte.gz"), "idx");
  EXPECT_EQ(FormatFromExtension("labels-idx1-ubyte"), "idx");
  DataSpec s;
  EXPECT_TRUE(s.uses_dir());
  s.train = {"tr-images-idx3-ubyte.gz", "tr-labels-idx1-ubyte.gz"};
  s.test = {"te-images-idx3-ubyte.gz", "te-labels-idx1-ubyte.gz"};
  EXPECT_TRUE(s.is_idx());
  EXPECT_FALSE(s.uses_dir());
  EXPECT_TRUE(CheckDataSpec(s).empty());
  EXPECT_EQ(s.SourceFiles(),
            (std::vector<std::string>{"tr-images-idx3-ubyte.gz", "tr-labels-idx1-ubyte.gz",
                                      "te-images-idx3-ubyte.gz", "te-labels-idx1-ubyte.gz"}));
  s.test.labels.clear();
  EXPECT_EQ(CheckDataSpec(s),
            (std::vector<std::string>{"data.test: idx data needs two files: {images: "
                                      "images-idx3-ubyte.gz, labels: labels-idx1-ubyte.gz}"}));
  DataSpec only_test;
  only_test.format = "idx";
  only_test.test = {"a", "b"};
  EXPECT_EQ(CheckDataSpec(only_test),
            (std::vector<std::string>{"data.train: missing; give {images: ..., labels: ...} IDX "
                                      "files (or data.dir alone)"}));
}

TEST(DataSpecTest, RelativePathsResolveFromTheConfigsFolder) {
  DataSpec s;
  s.dir = "fmnist";
  s.train = {"data/../x.npy", "y.npy"};
  s.test = {"/abs/t.npy", "t-y.npy"};
  ResolveRelativePaths(&s, "/home/u/study");
  EXPECT_EQ(s.dir, "/home/u/study/fmnist");
  EXPECT_EQ(s.train.path, "/home/u/study/x.npy");
  EXPECT_EQ(s.train.labels, "/home/u/study/y.npy");
  EXPECT_EQ(s.test.path, "/abs/t.npy");
  EXPECT_EQ(s.test.labels, "/home/u/study/t-y.npy");
  EXPECT_TRUE(s.file.path.empty());  // unset stays unset
  DataSpec unchanged;
  unchanged.file.path = "d.csv";
  ResolveRelativePaths(&unchanged, "");
  EXPECT_EQ(unchanged.file.path, "d.csv");
}

TEST(DataSpecTest, MissingSourceFilesAreNamed) {
  DataSpec s;
  s.dir = "/nonexistent";
  EXPECT_EQ(CheckSourceFilesPresent(s), "data.dir '/nonexistent': no such directory");
  s.format = "idx";
  s.train = {"/nonexistent/a-idx3-ubyte", "/nonexistent/b-idx1-ubyte"};
  EXPECT_EQ(CheckSourceFilesPresent(s),
            "data: cannot read '/nonexistent/a-idx3-ubyte', '/nonexistent/b-idx1-ubyte'");
}

}  // namespace data_spec_test
}  // namespace sift::data

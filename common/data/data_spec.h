// Where a study's data comes from and how it is prepared: one spec that the coordinator checks
// (`sift validate`, study creation) and the worker loads, sent over the wire as canonical JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift::data {

// One data file. For npy, `path` holds the features and `labels` the targets (two .npy files);
// for idx, `path` the images and `labels` the labels (two IDX files); csv and npz files hold
// both and leave `labels` empty.
struct FileRef {
  std::string path;
  std::string labels;
  bool empty() const { return path.empty(); }
};

struct SplitFractions {
  double val = 0.15;
  double test = 0.15;
  uint64_t seed = 1;
};

struct DataSpec {
  // "" (the default): idx when `dir` is set, else from the file's extension (.csv, .npy, .npz;
  // a trailing .gz is ignored).
  std::string format;

  // idx: Fashion-MNIST's four files in a folder, the validation set from the end of the training
  // file (the original form of `data:`), or explicit `train`, `val`, `test` image/label pairs
  // (val: from the end of train when not given; test: none when not given).
  std::string dir = "/usr/share/datasets/fashion-mnist";
  int64_t train_limit = 0;   // use only the first N training samples (0: all)
  int64_t val_size = 10000;  // held out from the end of the training file
  int64_t test_limit = 0;    // evaluate the test set on its first N samples (0: all)

  // csv, npy, npz: one `file` split by `split`, or explicit `train` and `val` (and `test`).
  FileRef file;
  FileRef train, val, test;
  SplitFractions split;

  std::string task;                   // classification | regression; "" infers from the labels
  std::string label;                  // csv: the target column (required)
  std::vector<std::string> features;  // csv: feature columns; empty: every column but the label
  std::string missing = "error";  // csv: error | mean (numeric: training mean; text: no category)
  // Scaled to zero mean and unit variance with the training rows' statistics: features, target
  // (regression: trained in that scale, scored in its own units), both or none. "" (unset): both
  // for a table (csv, or arrays of rows), the target only for images (samples of 2+ dimensions).
  std::string standardize;
  std::string x_key = "x", y_key = "y";  // npz: the arrays' names

  bool is_idx() const { return ResolvedFormat() == "idx"; }
  bool StandardizesFeatures(bool rows) const {
    return standardize.empty() ? rows : standardize == "features" || standardize == "both";
  }
  bool StandardizesTarget() const { return standardize != "features" && standardize != "none"; }
  // The idx folder form: Fashion-MNIST's four file names inside `dir`.
  bool uses_dir() const { return is_idx() && file.empty() && train.empty(); }
  // The format this spec reads: `format`, or the one the files' extension implies.
  std::string ResolvedFormat() const;
  // Every file the spec reads, in a fixed order (the four IDX files for the idx form).
  std::vector<std::string> SourceFiles() const;
};

// The format a file name implies: "csv", "npy", "npz", "idx" (…-idx3-ubyte, …-idx1-ubyte) or ""
// (unknown); ".gz" is looked through.
std::string FormatFromExtension(const std::string& path);

// Makes the spec's relative paths (dir and every file) relative to `base_dir`, the folder of
// the config that names them; absolute paths and an empty base_dir leave them as they are.
void ResolveRelativePaths(DataSpec* spec, const std::string& base_dir);

// "" when every file the spec reads is there and readable (for the folder form: the folder
// and its four files); otherwise the problem, naming what is missing. Contents are not read.
std::string CheckSourceFilesPresent(const DataSpec& spec);

// Problems with the spec itself, before any file is read, as "data.<field>: what is wrong".
std::vector<std::string> CheckDataSpec(const DataSpec& spec);

// Canonical JSON: every field, keys sorted. Equal specs give equal text (the cache key uses it).
std::string ToJson(const DataSpec& spec);
// Reads ToJson's output; throws std::runtime_error on anything else.
DataSpec DataSpecFromJson(const std::string& json);

}  // namespace sift::data

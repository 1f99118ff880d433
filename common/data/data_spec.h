// Where a study's data comes from and how it is prepared: one spec that the coordinator checks
// (`sift validate`, study creation) and the worker loads, sent over the wire as canonical JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift::data {

// One data file. For npy, `path` holds the features and `labels` the targets (two .npy files);
// csv and npz files hold both and leave `labels` empty.
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
  // file. The original form of `data:`, kept as it was.
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
  std::string missing = "error";      // csv: error | mean (numeric: training mean; text: no category)
  bool standardize = false;           // features to zero mean, unit variance (training statistics)
  std::string x_key = "x", y_key = "y";  // npz: the arrays' names

  bool is_idx() const { return ResolvedFormat() == "idx"; }
  // The format this spec reads: `format`, or the one the files' extension implies.
  std::string ResolvedFormat() const;
  // Every file the spec reads, in a fixed order (the four IDX files for the idx form).
  std::vector<std::string> SourceFiles() const;
};

// The format a file name implies: "csv", "npy", "npz" or "" (unknown); ".gz" is looked through.
std::string FormatFromExtension(const std::string& path);

// Problems with the spec itself, before any file is read, as "data.<field>: what is wrong".
std::vector<std::string> CheckDataSpec(const DataSpec& spec);

// Canonical JSON: every field, keys sorted. Equal specs give equal text (the cache key uses it).
std::string ToJson(const DataSpec& spec);
// Reads ToJson's output; throws std::runtime_error on anything else.
DataSpec DataSpecFromJson(const std::string& json);

}  // namespace sift::data

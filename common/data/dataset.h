// Reading csv, npy and npz data into train/val/test splits of plain float features and labels:
// splitting, one-hot encoding, imputation, standardisation and the task, all decided from the
// training rows only. Torch-free: the coordinator validates with it, the worker loads with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/data/data_spec.h"

namespace sift::data {

struct Split {
  int64_t size = 0;
  std::vector<float> x;          // size x feature_size, row-major
  std::vector<int64_t> classes;  // classification: class indices into Dataset::class_names
  std::vector<float> targets;    // regression: the label values
};

// A csv feature column as the user has it: its header name and, for a text column, its one-hot
// vocabulary (the training rows' values, sorted: the order of its encoded features).
struct InputColumn {
  std::string name;
  std::vector<std::string> vocabulary;  // empty: a numeric column, one feature as it is
};

// How a user's sample became the model's input, kept so that an export can take raw samples:
// the csv columns in order, then x / divisor and (x - mean) / std on the encoded features (one
// value for all of them, or one per feature of the flattened sample; empty: none).
struct InputPrep {
  std::string format;                // csv, npy, npz or idx
  std::vector<InputColumn> columns;  // csv only
  double divisor = 1.0;              // idx: 255, pixel bytes to [0, 1]
  std::vector<double> mean, std;
};

struct Dataset {
  std::string task;                        // classification | regression
  std::vector<int64_t> feature_shape;      // of one sample: [F], or e.g. [C, H, W] / [H, W] (npy)
  std::vector<std::string> feature_names;  // csv: a column, or "column=value" for one-hot
  std::vector<std::string> class_names;    // classification: the classes, index order
  Split train, val, test;
  // Regression with the target standardized: the training rows' mean and deviation. Targets stay
  // in their own units here; the trainer fits (y - target_mean) / target_std and maps its
  // predictions back. 0 and 1 otherwise.
  double target_mean = 0.0, target_std = 1.0;
  InputPrep input;
  int64_t feature_size() const;
  // Outputs a model needs: the number of classes, or 1 for regression.
  int64_t num_outputs() const;
};

// How the label decides the task when `data.task` is not set: any text label means
// classification; any non-integer number, or more than kMaxInferredClasses distinct integers,
// means regression; otherwise (a few distinct integers) classification.
inline constexpr int kMaxInferredClasses = 20;

// Loads and prepares the data of a csv, npy or npz spec (not idx: CheckDataSpec first).
// Throws std::runtime_error naming the file, the row (csv: its line) and the column of the first
// problem: a missing column, a ragged row, a missing or non-numeric value, a label that is not a
// class of the training rows, an empty split, a file that does not exist.
Dataset LoadDataset(const DataSpec& spec);

}  // namespace sift::data

// Checking a study's data before any trial: the files exist and read as the spec says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/data/data_spec.h"

namespace sift::data {

struct DataSummary {
  std::string task;     // classification | regression, as stated or inferred
  int64_t classes = 0;  // classification: the training rows' classes (idx: 10)
  // One line: "csv, classification: 2 classes, 30 features; 398 train, 85 val, 86 test rows".
  std::string text;
  // A classification label whose classes are text ("setosa"): never a regression target.
  std::string text_class;  // the first such class, "" when every class is a number
};

// Problems with the spec or its files, each naming the file (and row and column where there is
// one): "data: d.csv: line 7: has 3 fields, the header has 4". Empty: the data loads. csv, npy
// and npz files are read in full, as the worker will read them; idx files are checked to exist.
std::vector<std::string> ValidateData(const DataSpec& spec, DataSummary* summary = nullptr);

}  // namespace sift::data

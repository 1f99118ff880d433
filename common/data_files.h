// The files a study's data directory must hold, and the check that they are there. Shared by
// `sift validate` and `sift run` (data local to the coordinator) and the worker (before it
// trains a trial), so a missing data set stops a study before it is charged for any trial.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace sift::common {

// An IDX image set in Fashion-MNIST's layout (gzip-compressed).
inline constexpr const char* kTrainImages = "train-images-idx3-ubyte.gz";
inline constexpr const char* kTrainLabels = "train-labels-idx1-ubyte.gz";
inline constexpr const char* kTestImages = "t10k-images-idx3-ubyte.gz";
inline constexpr const char* kTestLabels = "t10k-labels-idx1-ubyte.gz";
inline constexpr const char* kDataFiles[] = {kTrainImages, kTrainLabels, kTestImages, kTestLabels};

// "" when `dir` holds every data file readable; otherwise the problem, naming what is missing.
// Only presence and readability: the contents are checked when the worker decodes them.
inline std::string CheckDataDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return "data.dir '" + dir + "': no such directory";
  if (!std::filesystem::is_directory(dir, ec)) return "data.dir '" + dir + "': not a directory";
  std::string missing;
  for (const char* name : kDataFiles) {
    if (!std::ifstream(std::filesystem::path(dir) / name, std::ios::binary)) {
      missing += std::string(missing.empty() ? "" : ", ") + name;
    }
  }
  if (missing.empty()) return "";
  return "data.dir '" + dir + "': cannot read " + missing;
}

}  // namespace sift::common

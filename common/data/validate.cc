#include "common/data/validate.h"

#include <cstdlib>
#include <stdexcept>

#include "common/data/dataset.h"
#include "common/data/file_bytes.h"

namespace sift::data {

std::vector<std::string> ValidateData(const DataSpec& spec, DataSummary* summary) {
  std::vector<std::string> errors = CheckDataSpec(spec);
  if (!errors.empty()) return errors;
  if (spec.is_idx()) {
    const std::string field = spec.uses_dir() ? "data.dir: " : "data: ";
    for (const std::string& path : spec.SourceFiles()) {
      if (!IsReadableFile(path)) errors.push_back(field + path + ": no such readable file");
    }
    const std::string where =
        spec.uses_dir() ? "idx images in " + spec.dir : "idx images from " + spec.train.path;
    if (errors.empty() && summary != nullptr) *summary = {"classification", 10, where, ""};
    return errors;
  }
  try {
    const Dataset d = LoadDataset(spec);
    if (summary != nullptr) {
      summary->task = d.task;
      summary->classes = static_cast<int64_t>(d.class_names.size());
      std::string& text = summary->text;
      text = spec.ResolvedFormat() + ", " + d.task + ": ";
      if (d.task == "classification") text += std::to_string(d.class_names.size()) + " classes, ";
      for (const auto& name : d.class_names) {
        char* end = nullptr;
        std::strtod(name.c_str(), &end);
        if (name.empty() || *end != '\0') {
          summary->text_class = name;
          break;
        }
      }
      text += std::to_string(d.feature_size()) + " features; " + std::to_string(d.train.size) +
              " train, " + std::to_string(d.val.size) + " val, " + std::to_string(d.test.size) +
              " test rows";
    }
  } catch (const std::exception& e) {
    errors.push_back(std::string("data: ") + e.what());
  }
  return errors;
}

}  // namespace sift::data

#include "common/config/config_model_files.h"

#include <filesystem>

#include "common/hparams/model_path.h"

namespace sift::common {
namespace {

using search::Params;
using search::ParamType;
using search::ParamValue;

// More files than this is not a search over files: the check stops there.
constexpr size_t kMaxModelFiles = 1000;

std::string Text(const Params& fixed, const std::string& key) {
  const auto it = fixed.find(key);
  return it == fixed.end() ? "" : search::ToString(it->second);
}

// The values `name` can take: fixed, a categorical's choices or an int range. "" or the problem.
std::string ValuesOf(const std::string& name, const Params& fixed, const search::SearchSpace& space,
                     std::vector<ParamValue>* out) {
  if (const auto it = fixed.find(name); it != fixed.end()) {
    out->push_back(it->second);
    return "";
  }
  const search::ParamSpec* p = space.Find(name);
  if (p == nullptr) return "names '" + name + "', which is neither searched nor set under trainer";
  if (p->type == ParamType::kCategorical) {
    *out = p->choices;
  } else if (p->type == ParamType::kInt && p->high - p->low < kMaxModelFiles) {
    for (auto v = static_cast<int64_t>(p->low); v <= static_cast<int64_t>(p->high); ++v) {
      out->emplace_back(std::in_place_type<int64_t>, v);
    }
  } else {
    return "names '" + name + "', a " + (p->type == ParamType::kInt ? "wide int" : "float") +
           " range: a file per value needs choices (type: categorical) or a small int range";
  }
  return "";
}

// Every file trainer.path can name; "" or the problem.
std::string PathFiles(const Params& fixed, const search::SearchSpace& space,
                      std::vector<std::string>* files) {
  const std::string path = Text(fixed, "path");
  if (path.empty()) return "";
  std::string problem;
  const auto names = common::PathParamNames(path, &problem);
  if (!problem.empty()) return problem;
  std::vector<Params> combos(1);
  for (const auto& name : names) {
    std::vector<ParamValue> values;
    if (std::string p = ValuesOf(name, fixed, space, &values); !p.empty()) {
      return "path: " + path + " " + p;
    }
    std::vector<Params> next;
    for (const auto& c : combos) {
      for (const auto& v : values) {
        next.push_back(c);
        next.back()[name] = v;
      }
    }
    if (next.size() > kMaxModelFiles) {
      return "path: " + path + " names over " + std::to_string(kMaxModelFiles) + " files";
    }
    combos = std::move(next);
  }
  for (const auto& c : combos) {
    std::string file;
    if (std::string p = common::FillPath(path, c, &file); !p.empty()) return p;
    files->push_back(file);
  }
  return "";
}

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

std::vector<std::string> CheckModelPath(const Params& fixed, const search::SearchSpace& space) {
  std::vector<std::string> files;
  if (std::string p = PathFiles(fixed, space, &files); !p.empty()) return {p};
  return {};
}

std::vector<std::string> MissingModelFiles(const Params& fixed, const search::SearchSpace& space) {
  std::vector<std::string> errors, files;
  if (!PathFiles(fixed, space, &files).empty()) return errors;  // a config error, reported there
  std::vector<std::string> missing;
  for (const auto& f : files) {
    if (!IsFile(f)) missing.push_back(f);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    errors.push_back("trainer.path: " + std::to_string(missing.size()) + " of " +
                     std::to_string(files.size()) + " model files do not exist: " + list);
  }
  if (const std::string from = Text(fixed, "init_from"); !from.empty() && !IsFile(from)) {
    errors.push_back("trainer.init_from: " + from + " does not exist");
  }
  return errors;
}

}  // namespace sift::common

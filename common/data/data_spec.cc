#include "common/data/data_spec.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/data_files.h"

namespace sift::data {
namespace {

using nlohmann::json;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

json RefJson(const FileRef& f) { return json{{"path", f.path}, {"labels", f.labels}}; }
FileRef RefFrom(const json& j) {
  return {j.at("path").get<std::string>(), j.at("labels").get<std::string>()};
}

std::string Percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", f);
  return buf;
}

}  // namespace

std::string FormatFromExtension(const std::string& path) {
  std::string p = path;
  if (EndsWith(p, ".gz")) p.resize(p.size() - 3);
  for (const char* ext : {"csv", "npy", "npz"}) {
    if (EndsWith(p, std::string(".") + ext)) return ext;
  }
  for (const char* ext : {"idx1-ubyte", "idx3-ubyte", ".idx"}) {
    if (EndsWith(p, ext)) return "idx";
  }
  return "";
}

void ResolveRelativePaths(DataSpec* spec, const std::string& base_dir) {
  if (base_dir.empty()) return;
  auto resolve = [&](std::string* path) {
    if (path->empty() || std::filesystem::path(*path).is_absolute()) return;
    *path = (std::filesystem::path(base_dir) / *path).lexically_normal().string();
  };
  resolve(&spec->dir);
  for (FileRef* f : {&spec->file, &spec->train, &spec->val, &spec->test}) {
    resolve(&f->path);
    resolve(&f->labels);
  }
}

std::string CheckSourceFilesPresent(const DataSpec& spec) {
  if (spec.uses_dir()) return common::CheckDataDir(spec.dir);
  std::string missing;
  for (const std::string& file : spec.SourceFiles()) {
    std::error_code ec;
    const bool readable = !std::filesystem::is_directory(file, ec) &&
                          static_cast<bool>(std::ifstream(file, std::ios::binary));
    if (!readable) missing += (missing.empty() ? "'" : ", '") + file + "'";
  }
  return missing.empty() ? "" : "data: cannot read " + missing;
}

std::string DataSpec::ResolvedFormat() const {
  if (!format.empty()) return format;
  const FileRef& first = !file.empty() ? file : train;
  if (first.empty()) return "idx";
  return FormatFromExtension(first.path);
}

std::vector<std::string> DataSpec::SourceFiles() const {
  if (uses_dir()) {
    std::vector<std::string> out;
    for (const char* name : common::kDataFiles) {
      out.push_back((std::filesystem::path(dir) / name).string());
    }
    return out;
  }
  std::vector<std::string> out;
  for (const FileRef* f : {&file, &train, &val, &test}) {
    if (!f->path.empty()) out.push_back(f->path);
    if (!f->labels.empty()) out.push_back(f->labels);
  }
  return out;
}

std::vector<std::string> CheckDataSpec(const DataSpec& s) {
  std::vector<std::string> errors;
  auto error = [&](const std::string& field, const std::string& what) {
    errors.push_back("data." + field + ": " + what);
  };
  const std::string format = s.ResolvedFormat();
  if (format != "idx" && format != "csv" && format != "npy" && format != "npz") {
    const FileRef& first = !s.file.empty() ? s.file : s.train;
    if (s.format.empty()) {
      error(!s.file.empty() ? "file" : "train",
            "cannot tell the format of '" + first.path +
                "' from its extension; set data.format: csv | npy | npz");
    } else {
      error("format", "must be one of idx, csv, npy, npz, got '" + s.format + "'");
    }
    return errors;
  }
  const bool has_files = !s.file.empty() || !s.train.empty() || !s.val.empty() || !s.test.empty();
  if (format == "idx") {
    if (!s.file.empty())
      error("file",
            "idx data is not split from one file; give data.train (and data.test) as {images: ..., "
            "labels: ...}, or data.dir");
    if (!has_files && s.dir.empty()) error("dir", "must not be empty");
    if (has_files && s.train.empty())
      error("train", "missing; give {images: ..., labels: ...} IDX files (or data.dir alone)");
    for (const auto& [name, ref] : {std::pair<const char*, const FileRef*>{"train", &s.train},
                                    {"val", &s.val},
                                    {"test", &s.test}}) {
      if (!ref->empty() && ref->labels.empty())
        error(name,
              "idx data needs two files: {images: images-idx3-ubyte.gz, labels: "
              "labels-idx1-ubyte.gz}");
    }
    if (!s.task.empty() && s.task != "classification")
      error("task", "idx data is classification (labels are class indices)");
    return errors;
  }
  if (!s.file.empty() && (!s.train.empty() || !s.val.empty() || !s.test.empty())) {
    error("file", "give either one file (split by data.split) or train/val/test files, not both");
  } else if (s.file.empty()) {
    if (s.train.empty())
      error("train", "missing; give data.file with data.split, or data.train and data.val");
    if (s.val.empty() && !s.train.empty())
      error("val", "missing; a study needs a validation set to score trials");
  }
  if (!s.file.empty()) {
    if (s.split.val <= 0 || s.split.val >= 1)
      error("split.val", "must be in (0, 1), got " + Percent(s.split.val));
    if (s.split.test < 0 || s.split.test >= 1)
      error("split.test", "must be in [0, 1), got " + Percent(s.split.test));
    if (s.split.val + s.split.test >= 1) error("split", "val + test must leave rows to train on");
  }
  for (const auto& [name, ref] : {std::pair<const char*, const FileRef*>{"file", &s.file},
                                  {"train", &s.train},
                                  {"val", &s.val},
                                  {"test", &s.test}}) {
    if (ref->empty()) continue;
    if (format == "npy" && ref->labels.empty()) {
      error(name, "npy data needs two files: {x: features.npy, y: labels.npy}");
    }
    if (format != "npy" && !ref->labels.empty()) {
      error(name, "a separate labels file is only for npy (csv and npz hold both)");
    }
    if (!s.format.empty() || FormatFromExtension(ref->path) == format) continue;
    error(name, "'" + ref->path + "' does not look like " + format +
                    " (set data.format to read it as " + format + ")");
  }
  if (format == "csv" && s.label.empty())
    error("label", "missing; name the target column of the CSV");
  if (format != "csv" && !s.label.empty())
    error("label", "is for csv data (npz uses data.arrays.y)");
  if (format != "csv" && !s.features.empty()) error("features", "is for csv data");
  if (!s.task.empty() && s.task != "classification" && s.task != "regression") {
    error("task", "must be classification or regression, got '" + s.task + "'");
  }
  if (s.missing != "error" && s.missing != "mean") {
    error("missing", "must be error or mean, got '" + s.missing + "'");
  }
  if (!s.standardize.empty() && s.standardize != "features" && s.standardize != "target" &&
      s.standardize != "both" && s.standardize != "none") {
    error("standardize",
          "must be features, target, both (true) or none (false), got '" + s.standardize + "'");
  }
  if (s.x_key.empty() || s.y_key.empty()) error("arrays", "array names must not be empty");
  return errors;
}

std::string ToJson(const DataSpec& s) {
  json j{{"format", s.format},
         {"dir", s.dir},
         {"train_limit", s.train_limit},
         {"val_size", s.val_size},
         {"test_limit", s.test_limit},
         {"file", RefJson(s.file)},
         {"train", RefJson(s.train)},
         {"val", RefJson(s.val)},
         {"test", RefJson(s.test)},
         {"split", {{"val", s.split.val}, {"test", s.split.test}, {"seed", s.split.seed}}},
         {"task", s.task},
         {"label", s.label},
         {"features", s.features},
         {"missing", s.missing},
         {"standardize", s.standardize},
         {"x_key", s.x_key},
         {"y_key", s.y_key}};
  return j.dump();  // nlohmann::json keeps keys sorted
}

DataSpec DataSpecFromJson(const std::string& text) {
  try {
    const json j = json::parse(text);
    DataSpec s;
    s.format = j.at("format").get<std::string>();
    s.dir = j.at("dir").get<std::string>();
    s.train_limit = j.at("train_limit").get<int64_t>();
    s.val_size = j.at("val_size").get<int64_t>();
    s.test_limit = j.at("test_limit").get<int64_t>();
    s.file = RefFrom(j.at("file"));
    s.train = RefFrom(j.at("train"));
    s.val = RefFrom(j.at("val"));
    s.test = RefFrom(j.at("test"));
    s.split.val = j.at("split").at("val").get<double>();
    s.split.test = j.at("split").at("test").get<double>();
    s.split.seed = j.at("split").at("seed").get<uint64_t>();
    s.task = j.at("task").get<std::string>();
    s.label = j.at("label").get<std::string>();
    s.features = j.at("features").get<std::vector<std::string>>();
    s.missing = j.at("missing").get<std::string>();
    // A coordinator before `standardize: features | target` sends true or false.
    const json& standardize = j.at("standardize");
    s.standardize = standardize.is_boolean() ? (standardize.get<bool>() ? "both" : "none")
                                             : standardize.get<std::string>();
    s.x_key = j.at("x_key").get<std::string>();
    s.y_key = j.at("y_key").get<std::string>();
    return s;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("data spec: bad JSON: ") + e.what());
  }
}

}  // namespace sift::data

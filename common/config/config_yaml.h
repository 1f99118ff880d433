// Reading YAML (and JSON, which YAML reads too) config nodes with errors that name the field:
// scalar type inference, typed reads, unknown and duplicate keys, and the line of every field.
// Internal to the config parser; nothing here knows about studies.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/config/config_limits.h"
#include "search/options.h"
#include "search/param_value.h"

namespace sift::common::yamlcfg {

// A scalar as a parameter value: int64 if it reads fully as one, else double (1e-4, 0.5, .inf),
// else string. A quoted scalar (or one tagged !!str) is a string whatever it reads as.
search::ParamValue InferParamValue(const YAML::Node& scalar);
// The same, plus unquoted true/false as bool (for searcher and scheduler options).
search::OptionValue InferOptionValue(const YAML::Node& scalar);

// "a map", "a list", "nothing", "'ten'": what a node is, for "must be X, got Y" messages.
std::string Describe(const YAML::Node& node);

// The closest of `candidates` to `word` when it is a plausible typo, else "".
std::string Suggest(const std::string& word, const std::vector<std::string>& candidates);

// The tree's size and depth against `limits` (max_nodes, max_depth), walking it without recursion
// and stopping at the first excess: "" when within them, else the problem, with *line (1-based)
// where it was found. Run before anything else reads the tree, so no later pass can be made to
// walk a huge or alias-multiplied one.
std::string CheckShape(const YAML::Node& root, const ConfigLimits& limits, int* line);

// "a.b" from a parent path and a key; a top-level key is its own path.
inline std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Errors keyed by field path, and the 1-based line of every field seen, so each message can end
// with "(line N)" using the longest known prefix of its path.
class Diagnostics {
 public:
  void NoteLine(const std::string& path, const YAML::Node& node);
  // `line` (1-based) overrides the line looked up from the path; 0: look it up.
  void Error(const std::string& path, const std::string& problem, int line = 0);
  // Takes "a.b: problem" (the form search/ and the hparams schema report in) under `prefix`.
  void ErrorUnder(const std::string& prefix, const std::string& message);
  size_t count() const { return errors_.size(); }
  // At most `max` errors, then one line counting the rest.
  std::vector<std::string> Format(size_t max = SIZE_MAX) const;

 private:
  struct Entry {
    std::string path;
    std::string problem;
    int line = 0;
  };
  int LineOf(const std::string& path) const;
  std::vector<Entry> errors_;
  std::map<std::string, int> lines_;
};

// Bound checks shared by every section: "budget.max_trials: must be >= 1, got 0".
void AtLeast(Diagnostics* d, const std::string& path, int64_t value, int64_t min);
void AtLeast(Diagnostics* d, const std::string& path, double value, double min);

// One map section of the config. Reads mark keys as known; RejectUnknown() reports the others
// (with a suggestion for typos). Duplicate keys are reported once, at the later occurrence.
class MapReader {
 public:
  // A null node reads as an empty map; any other non-map is reported as `path: must be a map`.
  MapReader(const YAML::Node& node, std::string path, Diagnostics* diag);

  bool ok() const { return ok_; }
  std::string PathOf(const std::string& key) const { return Join(path_, key); }

  // Every entry, in document order, duplicates skipped. Marks them all as read.
  std::vector<std::pair<std::string, YAML::Node>> Entries();
  // The value under `key`, or an invalid node when absent. Marks `key` as read.
  YAML::Node Get(const std::string& key);
  bool Has(const std::string& key) const { return index_.count(key) > 0; }

  // Typed reads: leave *out alone and return false when the key is absent or (with an error)
  // malformed.
  bool Int(const std::string& key, int64_t* out);
  bool UInt64(const std::string& key, uint64_t* out);
  bool Double(const std::string& key, double* out);
  bool String(const std::string& key, std::string* out);
  // A string from `allowed`; errors list them.
  bool Enum(const std::string& key, const std::vector<std::string>& allowed, std::string* out);

  void RejectUnknown();

 private:
  std::string path_;
  Diagnostics* diag_;
  bool ok_ = true;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::map<std::string, size_t> index_;
  std::set<std::string> read_;
};

}  // namespace sift::common::yamlcfg

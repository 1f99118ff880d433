// Options for searchers and schedulers, as they arrive from a study config, with validation that
// names the offending key.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace sift::search {

using OptionValue = std::variant<bool, int64_t, double, std::string>;
// Nested config maps arrive flattened with dots: {"plateau.patience": 3}.
using Options = std::map<std::string, OptionValue>;

// Reads options with defaults and bounds; collects "key: problem" errors and flags unknown keys.
class OptionReader {
 public:
  explicit OptionReader(const Options& options) : options_(options) {}

  int64_t Int(const std::string& key, int64_t def, int64_t min, int64_t max);
  double Double(const std::string& key, double def, double min, double max);
  bool Bool(const std::string& key, bool def);
  std::string String(const std::string& key, const std::string& def,
                     const std::vector<std::string>& allowed);
  // A list: the config flattens `key: [a, b]` to key.0, key.1; a single value reads as a list
  // of one. Empty when absent.
  std::vector<OptionValue> List(const std::string& key);
  bool Has(const std::string& key) const { return options_.count(key) > 0; }

  // Adds an error for every key never read. Call once, after all reads.
  void RejectUnknown();
  void AddError(const std::string& key, const std::string& problem) {
    errors_.push_back(key + ": " + problem);
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  const Options& options_;
  std::set<std::string> read_;
  std::vector<std::string> errors_;
};

}  // namespace sift::search

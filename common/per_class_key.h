// A class's held-out counts as metric keys: test_class_<class>_correct and
// test_class_<class>_total, the class by its name where the data names it (a CSV's 'setosa'),
// else by its index (IDX images). The worker writes them; the reports read them.
#pragma once

#include <string>

namespace sift::common {

inline constexpr char kPerClassPrefix[] = "test_class_";

// Whether a test metric is a per-class count (shown as a table, not as a score).
inline bool IsPerClassKey(const std::string& key) { return key.rfind(kPerClassPrefix, 0) == 0; }

inline std::string PerClassPrefix(const std::string& name, size_t index) {
  return kPerClassPrefix + (name.empty() ? std::to_string(index) : name);
}
// The class and which count a per-class key holds; false for any other key.
inline bool ParsePerClassKey(const std::string& key, std::string* cls, bool* correct) {
  const std::string prefix = kPerClassPrefix;
  if (!IsPerClassKey(key)) return false;
  for (const char* suffix : {"_correct", "_total"}) {
    const std::string s = suffix;
    if (key.size() > prefix.size() + s.size() &&
        key.compare(key.size() - s.size(), s.size(), s) == 0) {
      *cls = key.substr(prefix.size(), key.size() - prefix.size() - s.size());
      *correct = s == "_correct";
      return true;
    }
  }
  return false;
}

}  // namespace sift::common

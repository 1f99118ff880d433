#include "search/options.h"

#include <cmath>

#include "search/space.h"

namespace sift::search {

int64_t OptionReader::Int(const std::string& key, int64_t def, int64_t min, int64_t max) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  int64_t v;
  if (const auto* i = std::get_if<int64_t>(&it->second)) {
    v = *i;
  } else if (const auto* d = std::get_if<double>(&it->second); d && *d == std::floor(*d) &&
             IntBoundInRange(*d)) {
    v = static_cast<int64_t>(*d);
  } else {
    AddError(key, "must be an integer");
    return def;
  }
  if (v < min || v > max) {
    AddError(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                      std::to_string(v));
    return def;
  }
  return v;
}

double OptionReader::Double(const std::string& key, double def, double min, double max) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  double v;
  if (const auto* d = std::get_if<double>(&it->second)) {
    v = *d;
  } else if (const auto* i = std::get_if<int64_t>(&it->second)) {
    v = static_cast<double>(*i);
  } else {
    AddError(key, "must be a number");
    return def;
  }
  if (!(v >= min && v <= max)) {
    AddError(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                      std::to_string(v));
    return def;
  }
  return v;
}

bool OptionReader::Bool(const std::string& key, bool def) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  if (const auto* b = std::get_if<bool>(&it->second)) return *b;
  AddError(key, "must be true or false");
  return def;
}

std::string OptionReader::String(const std::string& key, const std::string& def,
                                 const std::vector<std::string>& allowed) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  const auto* s = std::get_if<std::string>(&it->second);
  if (s == nullptr) {
    AddError(key, "must be a string");
    return def;
  }
  if (allowed.empty()) return *s;
  for (const auto& a : allowed) {
    if (a == *s) return *s;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  AddError(key, "'" + *s + "' is not one of: " + list);
  return def;
}

void OptionReader::RejectUnknown() {
  for (const auto& [key, value] : options_) {
    if (!read_.count(key)) AddError(key, "unknown option");
  }
}

}  // namespace sift::search

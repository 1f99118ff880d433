// Metric values in JSON. JSON has no NaN or infinities (nlohmann writes them as `null`, and
// reading `null` back as a number throws), yet a diverging trial reports exactly those. So
// non-finite values travel as the strings "NaN", "Infinity" and "-Infinity" (the spellings
// JavaScript and Python's json use), finite ones as numbers with round-trip precision, and a
// `null` stored by an older sift reads as NaN. Every path that puts metrics into JSON uses this.
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace sift::common {

// "NaN", "Infinity" or "-Infinity" for a non-finite value; "" for a finite one.
inline const char* NonFiniteName(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return "";
}

inline nlohmann::json MetricToJson(double v) {
  if (std::isfinite(v)) return v;
  return NonFiniteName(v);
}

// Reads what MetricToJson wrote (and `null`, as NaN). Throws std::invalid_argument naming `what`
// for anything else.
inline double MetricFromJson(const nlohmann::json& j, const std::string& what) {
  if (j.is_number()) return j.get<double>();
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  throw std::invalid_argument(what + ": " + j.dump() +
                              " is not a metric value (a number, \"NaN\", \"Infinity\" or "
                              "\"-Infinity\")");
}

inline nlohmann::json MetricsToJson(const std::map<std::string, double>& metrics) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : metrics) j[name] = MetricToJson(value);
  return j;
}

// Throws std::invalid_argument naming `what` and the metric when `j` is not such a map.
inline std::map<std::string, double> MetricsFromJson(const nlohmann::json& j,
                                                     const std::string& what) {
  if (!j.is_object()) throw std::invalid_argument(what + ": metrics are not a JSON object");
  std::map<std::string, double> out;
  for (const auto& [name, value] : j.items()) out[name] = MetricFromJson(value, what + "." + name);
  return out;
}

// For text and CSV: the same spellings as JSON for non-finite values, fmt-style otherwise.
inline std::string FormatMetric(double v, int precision) {
  if (!std::isfinite(v)) return NonFiniteName(v);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, v);
  return buf;
}

}  // namespace sift::common

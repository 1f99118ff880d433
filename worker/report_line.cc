#include "worker/report_line.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace sift::worker {

std::optional<ReportLine> ParseReportLine(const std::string& line, std::string* error) {
  error->clear();
  // Cheap test first: most lines are the program's own output and are never parsed.
  const size_t start = line.find_first_not_of(" \t\r");
  if (start == std::string::npos || line[start] != '{' ||
      line.find("\"sift\"") == std::string::npos) {
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *error = "not valid JSON (a report is one line: {\"sift\": {\"epoch\": 1, ...}})";
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("sift")) return std::nullopt;
  const nlohmann::json& r = j["sift"];
  if (!r.is_object()) {
    *error = "\"sift\" must be an object of metrics, got " + r.dump();
    return std::nullopt;
  }
  ReportLine out;
  if (!r.contains("epoch")) {
    *error = "no \"epoch\" (the number of epochs completed, from 1)";
    return std::nullopt;
  }
  const nlohmann::json& epoch = r["epoch"];
  const bool whole =
      epoch.is_number_integer() ||
      (epoch.is_number_float() && std::floor(epoch.get<double>()) == epoch.get<double>() &&
       std::fabs(epoch.get<double>()) < 9e15);
  if (!whole || epoch.get<double>() < 1) {
    *error = "\"epoch\" must be a whole number >= 1, got " + epoch.dump();
    return std::nullopt;
  }
  out.epoch =
      epoch.is_number_integer() ? epoch.get<int64_t>() : static_cast<int64_t>(epoch.get<double>());
  for (const auto& [name, value] : r.items()) {
    if (name == "epoch") continue;
    if (name.empty()) {
      *error = "a metric has an empty name";
      return std::nullopt;
    }
    if (!value.is_number() || value.is_boolean()) {
      *error = "metric \"" + name + "\" must be a number, got " + value.dump();
      return std::nullopt;
    }
    out.metrics[name] = value.get<double>();
  }
  return out;
}

}  // namespace sift::worker

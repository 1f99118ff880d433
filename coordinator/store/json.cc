#include "coordinator/store/json.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/metric_json.h"

namespace sift::coordinator {

using json = nlohmann::json;

std::string MetricsToJsonText(const std::map<std::string, double>& metrics) {
  return common::MetricsToJson(metrics).dump();
}

std::map<std::string, double> MetricsFromJsonText(const std::string& text,
                                                  const std::string& what) {
  try {
    return common::MetricsFromJson(json::parse(text), what);
  } catch (const json::exception& e) {
    throw std::runtime_error(what + ": unreadable metrics: " + e.what());
  }
}

}  // namespace sift::coordinator

#include "coordinator/store_json.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/metric_json.h"

namespace sift::coordinator {

using json = nlohmann::json;

std::string ParamsToJsonText(const search::Params& params) {
  json j = json::object();
  for (const auto& [name, value] : params) {
    std::visit([&](const auto& v) { j[name] = v; }, value);
  }
  return j.dump();
}

search::Params ParamsFromJsonText(const std::string& text) {
  search::Params out;
  const json parsed = json::parse(text);  // items() must not outlive it
  for (const auto& [name, v] : parsed.items()) {
    if (v.is_number_integer()) {
      out[name] = v.get<int64_t>();
    } else if (v.is_number()) {
      out[name] = v.get<double>();
    } else {
      out[name] = v.get<std::string>();
    }
  }
  return out;
}

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

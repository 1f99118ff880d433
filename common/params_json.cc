#include "common/params_json.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <variant>

namespace sift::common {

using json = nlohmann::json;

json ParamsToJson(const search::Params& params) {
  json j = json::object();
  for (const auto& [name, value] : params) {
    std::visit([&](const auto& v) { j[name] = v; }, value);
  }
  return j;
}

std::string ParamsToJsonText(const search::Params& params) { return ParamsToJson(params).dump(); }

search::Params ParamsFromJsonText(const std::string& text) {
  json parsed;
  try {
    parsed = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!parsed.is_object()) throw std::runtime_error("must be a JSON object");
  search::Params out;
  for (const auto& [name, v] : parsed.items()) {
    if (v.is_number_integer()) {
      out[name] = v.get<int64_t>();
    } else if (v.is_number()) {
      out[name] = v.get<double>();
    } else if (v.is_string()) {
      out[name] = v.get<std::string>();
    } else {
      throw std::runtime_error(name + ": must be a number or a string");
    }
  }
  return out;
}

}  // namespace sift::common

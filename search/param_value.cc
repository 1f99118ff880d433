#include "search/param_value.h"

#include "search/number_text.h"

namespace sift::search {

std::string ToString(const ParamValue& value) {
  if (const auto* d = std::get_if<double>(&value)) {
    return G6(*d);
  }
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

std::string ToString(const Params& params) {
  std::string out = "{";
  for (const auto& [name, value] : params) {
    if (out.size() > 1) out += ", ";
    out += name + ": " + ToString(value);
  }
  return out + "}";
}

bool AsDouble(const ParamValue& value, double* out) {
  if (const auto* d = std::get_if<double>(&value)) {
    *out = *d;
    return true;
  }
  if (const auto* i = std::get_if<int64_t>(&value)) {
    *out = static_cast<double>(*i);
    return true;
  }
  return false;
}

}  // namespace sift::search

#include "common/wire/proto_convert.h"

namespace sift::common {

v1::ParamValue ToProto(const search::ParamValue& value) {
  v1::ParamValue out;
  if (const auto* d = std::get_if<double>(&value)) {
    out.set_double_value(*d);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    out.set_int_value(*i);
  } else {
    out.set_string_value(std::get<std::string>(value));
  }
  return out;
}

search::ParamValue FromProto(const v1::ParamValue& value) {
  switch (value.kind_case()) {
    case v1::ParamValue::kDoubleValue:
      return value.double_value();
    case v1::ParamValue::kIntValue:
      return value.int_value();
    default:
      return value.string_value();
  }
}

void ToProto(const search::Params& params,
             google::protobuf::Map<std::string, v1::ParamValue>* out) {
  for (const auto& [name, value] : params) (*out)[name] = ToProto(value);
}

search::Params FromProto(const google::protobuf::Map<std::string, v1::ParamValue>& params) {
  search::Params out;
  for (const auto& [name, value] : params) out[name] = FromProto(value);
  return out;
}

}  // namespace sift::common

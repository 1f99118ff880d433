// Conversions between sift.v1 messages and domain types, shared by services and clients.
#pragma once

#include <google/protobuf/map.h>

#include "search/param_value.h"
#include "sift/v1/study.pb.h"

namespace sift::common {

v1::ParamValue ToProto(const search::ParamValue& value);
search::ParamValue FromProto(const v1::ParamValue& value);
void ToProto(const search::Params& params, google::protobuf::Map<std::string, v1::ParamValue>* out);
search::Params FromProto(const google::protobuf::Map<std::string, v1::ParamValue>& params);

}  // namespace sift::common

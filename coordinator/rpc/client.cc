#include "coordinator/rpc/client.h"

#include "common/wire/proto_convert.h"
#include "coordinator/rpc/cost_proto.h"

namespace sift::coordinator {

// The shared conversions (common/wire) beside this file's overloads for summaries.
using common::FromProto;
using common::ToProto;

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
  common::ClientOptions plaintext;
  plaintext.address = address;
  return common::MakeChannel(plaintext);
}

}  // namespace sift::coordinator

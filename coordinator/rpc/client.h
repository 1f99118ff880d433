// Client-side helpers for the sift CLI: wire-to-domain conversions for printing (channels,
// TLS and tokens are in common/client_channel.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/client_channel.h"
#include "coordinator/report/report.h"
#include "coordinator/rpc/study_proto.h"
#include "coordinator/rpc/trial_proto.h"
#include "sift/v1/studies_service.grpc.pb.h"

namespace sift::coordinator {

// A plaintext channel (tests, local tools); common::MakeChannel does TLS.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address);
using common::CurrentUser;
using common::MakeContext;

}  // namespace sift::coordinator

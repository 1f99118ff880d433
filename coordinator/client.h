// Client-side helpers for the sift CLI: channels with the bearer token, and wire-to-domain
// conversions for printing.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "coordinator/report.h"
#include "sift/v1/studies_service.grpc.pb.h"

namespace sift::coordinator {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address);
// A context carrying "authorization: Bearer <token>" when token is set, with a deadline.
std::unique_ptr<grpc::ClientContext> MakeContext(const std::string& token, double timeout_s = 30);

StudySummary FromProto(const v1::Study& s);
TrialSummary FromProto(const v1::Trial& t);

}  // namespace sift::coordinator

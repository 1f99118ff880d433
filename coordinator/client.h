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
// Who is calling, for a study's audit trail: $USER, else the login name of this uid.
std::string CurrentUser();
// A context carrying "x-sift-user: <CurrentUser()>", "authorization: Bearer <token>" when token
// is set, and a deadline.
std::unique_ptr<grpc::ClientContext> MakeContext(const std::string& token, double timeout_s = 30);

StudySummary FromProto(const v1::Study& s);
TrialSummary FromProto(const v1::Trial& t);

}  // namespace sift::coordinator

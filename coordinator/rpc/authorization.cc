#include "coordinator/rpc/authorization.h"

#include <grpc/grpc_security_constants.h>

namespace sift::coordinator {

const std::map<std::string, Access, std::less<>>& AccessTable() {
  static const std::map<std::string, Access, std::less<>> kTable = {
      {"/sift.v1.Studies/CreateStudy", Access::kWrite},
      {"/sift.v1.Studies/GetStudy", Access::kRead},
      {"/sift.v1.Studies/ListStudies", Access::kRead},
      {"/sift.v1.Studies/ListTrials", Access::kRead},
      {"/sift.v1.Studies/CancelStudy", Access::kWrite},
      {"/sift.v1.Studies/PauseStudy", Access::kWrite},
      {"/sift.v1.Studies/ResumeStudy", Access::kWrite},
      {"/sift.v1.Studies/UpdateBudget", Access::kWrite},
      {"/sift.v1.Studies/EvaluateTrial", Access::kWrite},
      {"/sift.v1.Workers/RegisterWorker", Access::kWorker},
      {"/sift.v1.Workers/AcquireTrial", Access::kWorker},
      {"/sift.v1.Workers/ReportProgress", Access::kWorker},
      {"/sift.v1.Workers/CompleteTrial", Access::kWorker},
      {"/sift.v1.Workers/FailTrial", Access::kWorker},
      {"/sift.v1.Workers/Heartbeat", Access::kWorker},
      {"/sift.v1.Workers/PreemptTrial", Access::kWorker},
      {"/sift.v1.Workers/UploadCheckpoint", Access::kWorker},
      {"/sift.v1.Workers/DownloadCheckpoint", Access::kWorker},
  };
  return kTable;
}

bool RoleMay(common::Role role, Access access) {
  switch (access) {
    case Access::kRead:
      return role == common::Role::kUser || role == common::Role::kViewer;
    case Access::kWrite:
      return role == common::Role::kUser;
    case Access::kWorker:
      return role == common::Role::kWorker;
  }
  return false;
}

grpc::Status Authorizer::Decide(std::string_view method, const std::string* authorization,
                                bool client_certificate) const {
  const auto it = AccessTable().find(method);
  if (it == AccessTable().end()) {
    return {grpc::StatusCode::PERMISSION_DENIED,
            std::string(method) + " has no entry in the access table"};
  }
  const Access access = it->second;
  if (!credentials_.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization == nullptr || authorization->compare(0, kBearer.size(), kBearer) != 0) {
      return {grpc::StatusCode::UNAUTHENTICATED,
              "missing 'authorization: Bearer <token>' metadata"};
    }
    const auto role = credentials_.Find(std::string_view(*authorization).substr(kBearer.size()));
    if (!role) return {grpc::StatusCode::UNAUTHENTICATED, "invalid token"};
    if (!RoleMay(*role, access)) {
      return {grpc::StatusCode::PERMISSION_DENIED, std::string("a ") + common::RoleName(*role) +
                                                       " token may not call " +
                                                       std::string(method)};
    }
  }
  // Under mutual TLS a worker token alone is not enough: a stolen one needs a key too.
  if (access == Access::kWorker && worker_cert_required_ && !client_certificate) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            "worker calls need a client certificate (this coordinator uses mutual TLS)"};
  }
  return grpc::Status::OK;
}

grpc::Status Authorizer::Authorize(const grpc::ServerContextBase* ctx,
                                   std::string_view method) const {
  std::string authorization;
  const auto& metadata = ctx->client_metadata();
  const auto it = metadata.find("authorization");
  if (it != metadata.end()) authorization.assign(it->second.data(), it->second.size());
  // The server verified any certificate it was shown against --tls-client-ca; one being here
  // means the handshake checked it.
  const auto auth = ctx->auth_context();
  const bool certificate =
      auth && !auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
  return Decide(method, it != metadata.end() ? &authorization : nullptr, certificate);
}

}  // namespace sift::coordinator

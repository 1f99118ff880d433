// Who may call which RPC: one table from each full method name to its access class, and one
// Authorize() that every handler calls first. A method missing from the table is refused.
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/credentials.h"

namespace sift::coordinator {

// read: viewer and user. write: user. worker: worker (with a client certificate under mutual TLS).
enum class Access { kRead, kWrite, kWorker };

// "/sift.v1.Studies/CreateStudy" -> kWrite, ...: every RPC of every service.
const std::map<std::string, Access, std::less<>>& AccessTable();
bool RoleMay(common::Role role, Access access);

class Authorizer {
 public:
  // No credentials: every call is let through (a local, trusted network; the server warns).
  // worker_cert_required: Workers RPCs also need a verified client certificate (mutual TLS).
  Authorizer(common::Credentials credentials, bool worker_cert_required)
      : credentials_(std::move(credentials)), worker_cert_required_(worker_cert_required) {}

  // A sync handler's ServerContext or a callback handler's CallbackServerContext.
  grpc::Status Authorize(const grpc::ServerContextBase* ctx, std::string_view method) const;
  // The same decision from its inputs: the "authorization" metadata (nullptr when absent) and
  // whether the peer presented a verified client certificate.
  grpc::Status Decide(std::string_view method, const std::string* authorization,
                      bool client_certificate) const;

 private:
  common::Credentials credentials_;
  bool worker_cert_required_;
};

}  // namespace sift::coordinator

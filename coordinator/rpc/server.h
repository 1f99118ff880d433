// Runs the Studies and Workers services (and grpc.health.v1) over one Coordinator, plus the
// ticker that expires silent leases.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/credentials.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/metrics.h"

namespace grpc {
class Server;
}

namespace sift::coordinator {

class Authorizer;
class StudiesService;
class WorkersService;

// Who may connect and call (docs/security.md). The default: plaintext, every call let through.
struct ServerSecurity {
  common::Credentials credentials;  // the accepted tokens and their roles; empty: no checks
  std::string tls_cert, tls_key;    // PEM files: serve TLS only (plaintext is refused)
  std::string tls_client_ca;        // PEM file: Workers RPCs need a client certificate it signed
};

class Server {
 public:
  // Binds `listen` ("127.0.0.1:0" picks a free port); throws std::runtime_error if it cannot
  // (or cannot read a TLS file).
  Server(Coordinator* coordinator, const std::string& listen, ServerSecurity security = {});
  ~Server();

  int port() const { return port_; }
  const RpcMetrics& rpc_metrics() const { return rpc_metrics_; }
  const Authorizer& authorizer() const { return *auth_; }
  void Shutdown();
  void Wait();

 private:
  Coordinator* coordinator_;
  RpcMetrics rpc_metrics_;
  std::unique_ptr<Authorizer> auth_;
  std::unique_ptr<StudiesService> studies_;
  std::unique_ptr<WorkersService> workers_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread ticker_;
};

}  // namespace sift::coordinator

#include "coordinator/rpc/server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "coordinator/rpc/services.h"

namespace sift::coordinator {

namespace {

std::shared_ptr<grpc::ServerCredentials> TransportCredentials(const ServerSecurity& sec) {
  if (sec.tls_cert.empty() && sec.tls_key.empty()) {
    if (!sec.tls_client_ca.empty()) {
      throw std::runtime_error("--tls-client-ca needs --tls-cert and --tls-key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (sec.tls_cert.empty() || sec.tls_key.empty()) {
    throw std::runtime_error("--tls-cert and --tls-key go together");
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  auto read = [](const std::string& path, bool secret, std::string* text) {
    if (std::string p = common::ReadWholeFile(path, secret, text); !p.empty()) {
      throw std::runtime_error(p);
    }
  };
  read(sec.tls_cert, false, &pair.cert_chain);
  read(sec.tls_key, true, &pair.private_key);
  // Ask every client for a certificate and verify any it shows; the Authorizer then requires
  // one for Workers RPCs only, so the CLI needs none.
  grpc::SslServerCredentialsOptions ssl(sec.tls_client_ca.empty()
                                            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                            : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!sec.tls_client_ca.empty()) read(sec.tls_client_ca, false, &ssl.pem_root_certs);
  ssl.pem_key_cert_pairs.push_back(pair);
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

Server::Server(Coordinator* coordinator, const std::string& listen, ServerSecurity security)
    : coordinator_(coordinator),
      auth_(std::make_unique<Authorizer>(std::move(security.credentials),
                                         !security.tls_client_ca.empty())),
      studies_(std::make_unique<StudiesService>(coordinator, auth_.get())),
      workers_(std::make_unique<WorkersService>(coordinator, auth_.get())) {
  const bool tls = !security.tls_cert.empty();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, TransportCredentials(security), &port_);
  builder.RegisterService(studies_.get());
  builder.RegisterService(workers_.get());
  builder.SetMaxReceiveMessageSize(16 << 20);
  // gRPC's sync server keeps 1-2 idle polling threads by default and starts a thread per burst
  // beyond that, then ends it: under many workers' reports a third of the coordinator's CPU
  // went to creating and tearing down threads (bench/coordinator/throughput.sh). Keep a pool.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 4);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 64);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> timing;
  timing.push_back(rpc_metrics_.Factory());
  builder.experimental().SetInterceptorCreators(std::move(timing));
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    throw std::runtime_error(
        "cannot listen on " + listen +
        (tls ? " (address in use, or a TLS certificate and key that do not parse or match?)"
             : " (address in use, or not an address of this machine?)"));
  }
  ticker_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "sift-tick");
    while (!stopping_) {
      try {
        coordinator_->Tick();
      } catch (const std::exception& e) {  // the next tick tries again; the service stays up
        spdlog::error("periodic lease check failed: {}", e.what());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

Server::~Server() { Shutdown(); }

void Server::Shutdown() {
  if (stopping_.exchange(true)) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (ticker_.joinable()) ticker_.join();
}

void Server::Wait() { server_->Wait(); }

}  // namespace sift::coordinator

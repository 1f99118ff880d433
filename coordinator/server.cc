#include "coordinator/server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "coordinator/services.h"

namespace sift::coordinator {

Server::Server(Coordinator* coordinator, const std::string& listen, const std::string& token)
    : coordinator_(coordinator),
      studies_(std::make_unique<StudiesService>(coordinator, token)),
      workers_(std::make_unique<WorkersService>(coordinator, token)) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(studies_.get());
  builder.RegisterService(workers_.get());
  builder.SetMaxReceiveMessageSize(16 << 20);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    throw std::runtime_error("cannot listen on " + listen +
                             " (address in use, or not an address of this machine?)");
  }
  ticker_ = std::thread([this] {
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

// Runs the Studies and Workers services (and grpc.health.v1) over one Coordinator, plus the
// ticker that expires silent leases.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "coordinator/coordinator.h"

namespace grpc {
class Server;
}

namespace sift::coordinator {

class StudiesService;
class WorkersService;

class Server {
 public:
  // Binds `listen` ("127.0.0.1:0" picks a free port); throws std::runtime_error if it cannot.
  Server(Coordinator* coordinator, const std::string& listen, const std::string& token);
  ~Server();

  int port() const { return port_; }
  void Shutdown();
  void Wait();

 private:
  Coordinator* coordinator_;
  std::unique_ptr<StudiesService> studies_;
  std::unique_ptr<WorkersService> workers_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread ticker_;
};

}  // namespace sift::coordinator

#include "tests/integration/cluster_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "coordinator/rpc/client.h"

namespace sift::testing {

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

int ListeningPort(Process& coordinator) {
  const std::regex port_re("listening on ([0-9]+)");
  for (int i = 0; i < 200; ++i) {
    std::smatch m;
    const std::string log = coordinator.Log();
    if (std::regex_search(log, m, port_re)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "coordinator did not start:\n" << coordinator.Log();
  return 0;
}

int StartCoordinator(std::unique_ptr<Process>* out, const std::string& dir,
                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinDir() + "/sift",
                                   "coordinator",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--db",
                                   dir + "/sift.db",
                                   "--prices",
                                   SourceDir() + "/examples/prices.json",
                                   "--checkpoint-dir",
                                   dir + "/checkpoints",
                                   "--lease-timeout",
                                   "10"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  *out = std::make_unique<Process>(argv, dir + "/coordinator.log");
  return ListeningPort(**out);
}

v1::Study WaitForStudyEnd(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                          double timeout_s, int64_t study_id) {
  auto stub = v1::Studies::NewStub(channel);
  v1::Study study;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    v1::GetStudyRequest req;
    req.set_study_id(study_id);
    if (stub->GetStudy(coordinator::MakeContext(token).get(), req, &study).ok() &&
        study.state() != v1::STUDY_RUNNING) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return study;
}

v1::Study WaitForStudyEnd(const std::string& address, double timeout_s, int64_t study_id) {
  return WaitForStudyEnd(coordinator::MakeChannel(address), "", timeout_s, study_id);
}

}  // namespace sift::testing

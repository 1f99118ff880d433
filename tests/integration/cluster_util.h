// Helpers for integration tests that run a standalone `sift coordinator` and talk to it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sift/v1/studies_service.grpc.pb.h"
#include "tests/integration/process.h"

namespace sift::testing {

// Writes `text` to `path` and returns the path.
std::string WriteFile(const std::string& path, const std::string& text);

// The port a coordinator started with --listen 127.0.0.1:0 prints on its first output line.
int ListeningPort(Process& coordinator);

// Starts `sift coordinator` (database and checkpoints in `dir`) on a free port; returns the port.
int StartCoordinator(std::unique_ptr<Process>* out, const std::string& dir,
                     const std::vector<std::string>& extra = {});

// Polls GetStudy until the study leaves RUNNING or `timeout_s` passes; returns the last answer.
v1::Study WaitForStudyEnd(const std::string& address, double timeout_s, int64_t study_id = 1);
// The same over a given channel (TLS) with a bearer token.
v1::Study WaitForStudyEnd(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                          double timeout_s, int64_t study_id = 1);

}  // namespace sift::testing

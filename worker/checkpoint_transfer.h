// Moves checkpoint files to and from the coordinator over the Workers service, for workers that
// share no filesystem with it: 1 MiB chunks, CRC-32 of the whole file checked on both ends.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "sift/v1/workers_service.grpc.pb.h"

namespace sift::worker {

using ContextFactory = std::function<std::unique_ptr<grpc::ClientContext>()>;

grpc::Status UploadCheckpoint(v1::Workers::Stub* stub, const ContextFactory& context,
                              const std::string& worker_id, const std::string& lease_id,
                              const std::string& local_path, const std::string& name);

// Writes to local_path (through a temporary file); DATA_LOSS if the bytes do not match the CRC.
grpc::Status DownloadCheckpoint(v1::Workers::Stub* stub, const ContextFactory& context,
                                const std::string& worker_id, const std::string& lease_id,
                                const std::string& name, const std::string& local_path);

}  // namespace sift::worker

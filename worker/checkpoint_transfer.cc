#include "worker/checkpoint_transfer.h"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <vector>

namespace sift::worker {

grpc::Status UploadCheckpoint(v1::Workers::Stub* stub, const ContextFactory& context,
                              const std::string& worker_id, const std::string& lease_id,
                              const std::string& local_path, const std::string& name) {
  std::ifstream in(local_path, std::ios::binary);
  if (!in) return {grpc::StatusCode::NOT_FOUND, local_path + ": cannot read the checkpoint"};
  std::vector<char> buf(1 << 20);
  auto ctx = context();
  v1::UploadCheckpointResponse resp;
  auto writer = stub->UploadCheckpoint(ctx.get(), &resp);
  uint32_t crc = 0;
  int64_t offset = 0;
  while (true) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    crc = static_cast<uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n)));
    const bool last = in.eof();
    v1::CheckpointChunk chunk;
    chunk.set_worker_id(worker_id);
    chunk.set_lease_id(lease_id);
    chunk.set_name(name);
    chunk.set_offset(offset);
    chunk.set_data(buf.data(), n);
    chunk.set_last(last);
    if (last) {
      chunk.set_crc32(crc);
      chunk.set_total_size(offset + static_cast<int64_t>(n));
    }
    if (!writer->Write(chunk)) break;
    offset += static_cast<int64_t>(n);
    if (last) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

grpc::Status DownloadCheckpoint(v1::Workers::Stub* stub, const ContextFactory& context,
                                const std::string& worker_id, const std::string& lease_id,
                                const std::string& name, const std::string& local_path) {
  v1::DownloadCheckpointRequest req;
  req.set_worker_id(worker_id);
  req.set_lease_id(lease_id);
  req.set_name(name);
  auto ctx = context();
  auto reader = stub->DownloadCheckpoint(ctx.get(), req);
  const std::string part = local_path + ".part";
  std::ofstream out(part, std::ios::binary | std::ios::trunc);
  v1::CheckpointChunk chunk;
  uint32_t crc = 0;
  int64_t size = 0;
  bool complete = false;
  while (reader->Read(&chunk)) {
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    crc = static_cast<uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(chunk.data().data()),
                                      static_cast<uInt>(chunk.data().size())));
    size += static_cast<int64_t>(chunk.data().size());
    if (chunk.last()) {
      complete = chunk.crc32() == crc && chunk.total_size() == size;
      break;
    }
  }
  grpc::Status s = reader->Finish();
  out.close();
  if (!s.ok()) {
    std::remove(part.c_str());
    return s;
  }
  if (!complete || !out) {
    std::remove(part.c_str());
    return {grpc::StatusCode::DATA_LOSS, "checkpoint " + name + " arrived incomplete or corrupt"};
  }
  if (std::rename(part.c_str(), local_path.c_str()) != 0) {
    return {grpc::StatusCode::INTERNAL, local_path + ": cannot write the checkpoint"};
  }
  return grpc::Status::OK;
}

}  // namespace sift::worker

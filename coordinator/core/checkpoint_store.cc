#include "coordinator/core/checkpoint_store.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/checkpoint_file.h"

namespace sift::coordinator {
namespace {

Status IoError(const std::string& path, const std::string& what) {
  const int err = errno;
  return Status::Error(err == ENOSPC || err == EDQUOT ? Status::Code::kResourceExhausted
                                                      : Status::Code::kUnavailable,
                       path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

CheckpointUpload::CheckpointUpload(std::string path)
    : path_(std::move(path)), part_(path_ + ".part") {}

CheckpointUpload::~CheckpointUpload() {
  if (file_) std::fclose(file_);
  if (!done_) std::remove(part_.c_str());
}

Status CheckpointUpload::Append(int64_t offset, const std::string& data) {
  if (offset != size_) {
    return Status::Error(Status::Code::kInvalidArgument, "checkpoint chunk at offset " +
                                                             std::to_string(offset) +
                                                             ", expected " + std::to_string(size_));
  }
  if (!file_) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    file_ = std::fopen(part_.c_str(), "wb");
    if (!file_) return IoError(part_, "cannot create");
  }
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    return IoError(part_, "cannot write");
  }
  crc_ = static_cast<uint32_t>(
      crc32(crc_, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
  size_ += static_cast<int64_t>(data.size());
  return Status::Ok();
}

Status CheckpointUpload::Finish(int64_t total_size, uint32_t crc) {
  if (!file_) {
    if (Status s = Append(0, ""); !s.ok()) return s;
  }
  if (total_size != size_ || crc != crc_) {
    return Status::Error(Status::Code::kInvalidArgument,
                         "checkpoint " + std::filesystem::path(path_).filename().string() +
                             " arrived corrupt: " + std::to_string(size_) + " bytes with CRC " +
                             std::to_string(crc_) + ", sender said " + std::to_string(total_size) +
                             " bytes with CRC " + std::to_string(crc) + "; not stored");
  }
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0) return IoError(part_, "cannot sync");
  std::fclose(file_);
  file_ = nullptr;
  // The bytes arrived as sent; check that what was sent is an intact checkpoint (a worker's disk
  // or memory can damage one before the upload). A damaged one never replaces a stored one.
  if (std::string problem = common::CheckpointFileProblem(part_); !problem.empty()) {
    if (problem.rfind(part_ + ": ", 0) == 0) problem.erase(0, part_.size() + 2);
    return Status::Error(Status::Code::kInvalidArgument,
                         "checkpoint " + std::filesystem::path(path_).filename().string() +
                             " is damaged (" + problem + "); not stored");
  }
  if (std::rename(part_.c_str(), path_.c_str()) != 0) return IoError(path_, "cannot publish");
  done_ = true;
  return Status::Ok();
}

Status ReadCheckpointChunks(
    const std::string& path, size_t chunk_bytes,
    const std::function<bool(int64_t, const std::string&, bool, uint32_t)>& emit) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return Status::Error(Status::Code::kNotFound,
                         "no checkpoint " + std::filesystem::path(path).filename().string());
  }
  // One pass for the CRC first, so the last chunk can carry it.
  std::vector<char> buf(chunk_bytes);
  uint32_t crc = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    crc = static_cast<uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n)));
  }
  std::rewind(f);
  int64_t offset = 0;
  bool last = false;
  while (!last) {
    n = std::fread(buf.data(), 1, buf.size(), f);
    last = n < buf.size() || std::feof(f) || std::fgetc(f) == EOF;
    if (!last) std::fseek(f, -1, SEEK_CUR);
    if (!emit(offset, std::string(buf.data(), n), last, crc)) break;
    offset += static_cast<int64_t>(n);
  }
  std::fclose(f);
  return Status::Ok();
}

std::vector<std::string> ListCheckpointFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(it->path().filename().string());
  }
  return out;
}

int64_t DeleteCheckpointFiles(const std::string& dir, const std::vector<std::string>& names,
                              std::vector<std::string>* problems) {
  int64_t freed = 0;
  for (const auto& name : names) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) continue;  // already gone
    if (!std::filesystem::remove(path, ec) || ec) {
      problems->push_back(path.string() + ": " + ec.message());
      continue;
    }
    freed += static_cast<int64_t>(size);
  }
  return freed;
}

}  // namespace sift::coordinator

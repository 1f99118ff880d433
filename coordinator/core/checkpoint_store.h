// Checkpoints kept by the coordinator for workers that share no filesystem with it. Uploads land
// in a temporary file and become visible only after their size and CRC-32 match and the file is
// an intact checkpoint (framing and payload checksum; fsync, rename), so a broken or damaged
// upload never replaces a good checkpoint.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "coordinator/core/status.h"

namespace sift::coordinator {

class CheckpointUpload {
 public:
  // Starts writing `path` (through path + ".part").
  explicit CheckpointUpload(std::string path);
  ~CheckpointUpload();  // removes the partial file unless Finish succeeded

  // Chunks must arrive in order: `offset` equals the bytes received so far.
  Status Append(int64_t offset, const std::string& data);
  // Checks the total size, the CRC-32 and the checkpoint framing, then publishes the file
  // atomically. kInvalidArgument (the service answers DATA_LOSS) when any check fails.
  Status Finish(int64_t total_size, uint32_t crc32);
  int64_t size() const { return size_; }

 private:
  std::string path_, part_;
  FILE* file_ = nullptr;
  int64_t size_ = 0;
  uint32_t crc_ = 0;
  bool done_ = false;
};

// Streams `path` in chunks of `chunk_bytes`; `emit(offset, data, last, crc32_of_whole_file)`
// returns false to stop early. NOT_FOUND if the file is missing.
Status ReadCheckpointChunks(
    const std::string& path, size_t chunk_bytes,
    const std::function<bool(int64_t, const std::string&, bool, uint32_t)>& emit);

// The file names in `dir`; none when it does not exist yet.
std::vector<std::string> ListCheckpointFiles(const std::string& dir);

// Deletes `names` from `dir`; returns the bytes freed. A file that cannot go is named in
// `problems` and left; a missing one is skipped.
int64_t DeleteCheckpointFiles(const std::string& dir, const std::vector<std::string>& names,
                              std::vector<std::string>* problems);

}  // namespace sift::coordinator

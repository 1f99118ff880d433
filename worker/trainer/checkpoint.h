// Checkpoint files: a torch archive inside a framed file (magic "SIFTCKPT", version, length,
// CRC-32), written atomically. What goes into the archive is the Trainer's business.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "worker/trainer/checkpoint_error.h"

namespace sift::worker {

// Serialises `archive` and writes it atomically; throws CheckpointError on I/O failure.
void WriteCheckpointFile(const std::string& path, torch::serialize::OutputArchive& archive);

// Reads and verifies the file, then parses it into `archive` with tensors on `device`.
// Throws CheckpointError; never returns a partly read archive.
void ReadCheckpointFile(const std::string& path, const torch::Device& device,
                        torch::serialize::InputArchive* archive);

// Scalars and strings in archives.
void WriteInt(torch::serialize::OutputArchive& a, const std::string& key, int64_t v);
int64_t ReadInt(torch::serialize::InputArchive& a, const std::string& key);
void WriteDouble(torch::serialize::OutputArchive& a, const std::string& key, double v);
double ReadDouble(torch::serialize::InputArchive& a, const std::string& key);
void WriteString(torch::serialize::OutputArchive& a, const std::string& key, const std::string& v);
std::string ReadString(torch::serialize::InputArchive& a, const std::string& key);

}  // namespace sift::worker

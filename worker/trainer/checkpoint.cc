#include "worker/trainer/checkpoint.h"

#include <sstream>

#include "common/checkpoint_file.h"
#include "common/framed_file.h"

namespace sift::worker {
using common::FramedFileError;
using common::kCheckpointMagic;
using common::ReadFramedFile;
using common::WriteFramedFile;

void WriteCheckpointFile(const std::string& path, torch::serialize::OutputArchive& archive) {
  std::ostringstream out;
  archive.save_to(out);
  try {
    WriteFramedFile(path, kCheckpointMagic, kCheckpointVersion, out.str());
  } catch (const FramedFileError& e) {
    throw CheckpointError(std::string("cannot write checkpoint: ") + e.what());
  }
}

void ReadCheckpointFile(const std::string& path, const torch::Device& device,
                        torch::serialize::InputArchive* archive) {
  std::string payload;
  try {
    payload = ReadFramedFile(path, kCheckpointMagic, kCheckpointVersion);
  } catch (const FramedFileError& e) {
    throw CheckpointError(std::string("bad checkpoint: ") + e.what());
  }
  try {
    std::istringstream in(payload);
    archive->load_from(in, device);
  } catch (const c10::Error& e) {
    throw CheckpointError("bad checkpoint: " + path +
                          ": cannot parse archive: " + e.what_without_backtrace());
  }
}

void WriteInt(torch::serialize::OutputArchive& a, const std::string& key, int64_t v) {
  a.write(key, c10::IValue(v));
}

int64_t ReadInt(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read(key, v);
  return v.toInt();
}

void WriteDouble(torch::serialize::OutputArchive& a, const std::string& key, double v) {
  a.write(key, c10::IValue(v));
}

double ReadDouble(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read(key, v);
  return v.toDouble();
}

void WriteString(torch::serialize::OutputArchive& a, const std::string& key, const std::string& v) {
  a.write(key, c10::IValue(v));
}

std::string ReadString(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  a.read(key, v);
  return v.toStringRef();
}

}  // namespace sift::worker

#include "worker/dir_archive.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/posix_fs.h"

namespace sift::worker {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "SIFTDIR1";
constexpr size_t kMagicSize = 8;

void PutInt(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetInt(const std::string& in, size_t* pos, int bytes) {
  if (in.size() - *pos < static_cast<size_t>(bytes)) {
    throw std::runtime_error("checkpoint folder archive is truncated");
  }
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[*pos + i])) << (8 * i);
  }
  *pos += bytes;
  return v;
}

}  // namespace

bool IsPackedDirectory(const std::string& payload) {
  return payload.compare(0, kMagicSize, kMagic, kMagicSize) == 0;
}

std::string PackDirectory(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // the same folder packs to the same bytes
  std::string out(kMagic, kMagicSize);
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream bytes;
    if (!(in && bytes << in.rdbuf()) && fs::file_size(f) > 0) {
      throw std::runtime_error("cannot read " + f.string());
    }
    const std::string rel = fs::relative(f, dir).generic_string();
    const std::string data = bytes.str();
    PutInt(&out, rel.size(), 4);
    out += rel;
    PutInt(&out, data.size(), 8);
    out += data;
  }
  return out;
}

void UnpackDirectory(const std::string& archive, const std::string& dir) {
  if (archive.compare(0, kMagicSize, kMagic) != 0) {
    throw std::runtime_error("not a checkpoint folder archive (a built-in trainer's checkpoint?)");
  }
  for (const std::string& p : {common::RemoveAll(dir), common::CreateDirectories(dir)}) {
    if (!p.empty()) throw std::runtime_error(p);
  }
  size_t pos = kMagicSize;
  while (pos < archive.size()) {
    const uint64_t name_size = GetInt(archive, &pos, 4);
    if (archive.size() - pos < name_size)
      throw std::runtime_error("checkpoint folder archive is truncated");
    const fs::path rel = fs::path(archive.substr(pos, name_size)).lexically_normal();
    pos += name_size;
    if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") {
      throw std::runtime_error("checkpoint folder archive names a path outside it: " +
                               rel.string());
    }
    const uint64_t size = GetInt(archive, &pos, 8);
    if (archive.size() - pos < size)
      throw std::runtime_error("checkpoint folder archive is truncated");
    const fs::path target = fs::path(dir) / rel;
    if (std::string p = common::CreateDirectories(target.parent_path().string()); !p.empty()) {
      throw std::runtime_error(p);
    }
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(archive.data() + pos, static_cast<std::streamsize>(size));
    if (!out) throw std::runtime_error("cannot write " + target.string());
    pos += size;
  }
}

}  // namespace sift::worker

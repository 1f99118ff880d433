#include "worker/export_command.h"

#include <filesystem>
#include <iostream>

#include "common/checkpoint_file.h"
#include "worker/dir_archive.h"
#include "worker/trainer/export.h"

namespace sift::worker {
namespace {

namespace fs = std::filesystem;

// A command trial's checkpoint is its program's folder, packed: the export is that folder.
// Never unpacks over a user's files (UnpackDirectory empties its target first).
int ExportFolder(const std::string& payload, const std::string& checkpoint,
                 const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    std::cerr << "sift-worker export: " << checkpoint
              << " is a command trial's checkpoint folder; --out " << out
              << " must be a new or empty directory to unpack it into\n";
    return 1;
  }
  UnpackDirectory(payload, out);
  int64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(out, ec)) files += e.is_regular_file();
  std::cout << "unpacked " << out << ": the checkpoint folder (" << files
            << " files) that the trial's program left in SIFT_CHECKPOINT_DIR; a command trial's "
               "model is whatever its program saved there\n";
  return 0;
}

}  // namespace

int RunExport(const std::string& checkpoint, const std::string& out) {
  try {
    const std::string payload =
        common::ReadFramedFile(checkpoint, common::kCheckpointMagic, common::kCheckpointVersion);
    if (IsPackedDirectory(payload)) return ExportFolder(payload, checkpoint, out);
    const ExportedModel m = ExportCheckpoint(checkpoint, out);
    std::string sample;
    for (int64_t d : m.shape.sample) sample += (sample.empty() ? "" : ", ") + std::to_string(d);
    std::cout << "wrote " << out << ": " << m.hp.model << ", input [batch, " << sample
              << "] -> output [batch, " << m.shape.outputs
              << "], eval mode; load with torch.jit.load and feed it samples as the data files "
                 "hold them (it prepares them as the trial's data was prepared)\n"
              << "wrote " << SidecarPath(out)
              << ": the input's column order, one-hot vocabularies and classes "
                 "(docs/workloads.md, \"Using an exported model\")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sift-worker export: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sift::worker

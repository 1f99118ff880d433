// A trained built-in model as TorchScript that PyTorch's torch.jit.load runs (how:
// torchscript_export.h). Torch-free, so `sift-worker export` compiles without LibTorch's headers.
#pragma once

#include <string>

#include "common/hparams/hparams.h"
#include "worker/trainer/model_shape.h"
#include "worker/trainer/model_spec.h"

namespace sift::worker {

struct ExportedModel {
  common::HParams hp;
  ModelShape shape;
};

// Where an export to `out` writes its sidecar: `out` with the extension .json (model.pt ->
// model.json); throws std::invalid_argument when that is `out` itself.
std::string SidecarPath(const std::string& out);

// Reads the trial checkpoint at `checkpoint` (written by Trainer::SaveCheckpoint), rebuilds its
// model with the trained weights and writes it to `out` as TorchScript, and the sidecar
// (ExportSidecarJson) to SidecarPath(out). Throws CheckpointError (unreadable, or older than
// model specs in checkpoints) or std::runtime_error.
ExportedModel ExportCheckpoint(const std::string& checkpoint, const std::string& out);

}  // namespace sift::worker

// A trained built-in model as TorchScript that PyTorch's torch.jit.load runs. Built-in models are
// torch::nn modules, which LibTorch cannot script; the export rebuilds each as a
// torch::jit::Module with the same parameters and buffers (same names: "fc1.weight") and a
// forward written out as TorchScript source by the model itself (Net::TorchScriptForward), in
// eval mode: dropout off, batch norm on its running statistics.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <string>

#include "common/hparams/hparams.h"
#include "worker/trainer/model_spec.h"
#include "worker/trainer/models.h"

namespace sift::worker {

// `net`'s eval-mode forward as a TorchScript module on the CPU that takes raw samples: it
// reshapes them to shape.sample, converts them to float, applies shape.input's scaling and
// standardization, and maps outputs back to the target's units when the target was
// standardized. Throws std::invalid_argument when the model has no TorchScript form.
torch::jit::Module ToTorchScript(const Net& net, const std::string& class_name,
                                 const ModelShape& shape = {});

struct ExportedModel {
  HParams hp;
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

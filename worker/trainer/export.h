// A trained built-in model as TorchScript that PyTorch's torch.jit.load runs (how:
// torchscript_export.h). Torch-free, so `sift-worker export` compiles without LibTorch's headers.
#pragma once

#include <string>

#include "common/hparams/hparams.h"
#include "worker/trainer/model_shape.h"

namespace sift::worker {

// What a checkpoint records of its model so that an export can rebuild it: the shape settings
// (ModelParams) and the data's sample shape and outputs, as JSON.
std::string ModelSpecJson(const HParams& hp, const ModelShape& shape);
// Reads ModelSpecJson's output; throws std::runtime_error naming the problem.
void ParseModelSpec(const std::string& json, HParams* hp, ModelShape* shape);

struct ExportedModel {
  HParams hp;
  ModelShape shape;
};

// Reads the trial checkpoint at `checkpoint` (written by Trainer::SaveCheckpoint), rebuilds its
// model with the trained weights and writes it to `out` as TorchScript. Throws CheckpointError
// (unreadable, or older than model specs in checkpoints) or std::runtime_error.
ExportedModel ExportCheckpoint(const std::string& checkpoint, const std::string& out);

}  // namespace sift::worker

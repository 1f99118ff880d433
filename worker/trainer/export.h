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
#include "worker/trainer/models.h"

namespace sift::worker {

// What a checkpoint records of its model so that an export can rebuild it: the shape settings
// (ModelParams) and the data's sample shape and outputs, as JSON.
std::string ModelSpecJson(const HParams& hp, const ModelShape& shape);
// Reads ModelSpecJson's output; throws std::runtime_error naming the problem.
void ParseModelSpec(const std::string& json, HParams* hp, ModelShape* shape);

// `net`'s eval-mode forward as a TorchScript module on the CPU, its outputs mapped back to the
// target's units when `shape` says the target was standardized. Throws std::invalid_argument
// when the model has no TorchScript form.
torch::jit::Module ToTorchScript(const Net& net, const std::string& class_name,
                                 const ModelShape& shape = {});

struct ExportedModel {
  HParams hp;
  ModelShape shape;
};

// Reads the trial checkpoint at `checkpoint` (written by Trainer::SaveCheckpoint), rebuilds its
// model with the trained weights and writes it to `out` as TorchScript. Throws CheckpointError
// (unreadable, or older than model specs in checkpoints) or std::runtime_error.
ExportedModel ExportCheckpoint(const std::string& checkpoint, const std::string& out);

}  // namespace sift::worker

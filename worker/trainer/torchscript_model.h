// model: torchscript: a user's module saved with torch.jit.save, trained by the same loop as the
// built-in models (optimizer, schedule, precision, accumulation, checkpoints).
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <memory>

#include "common/hparams/hparams.h"
#include "worker/trainer/models.h"

namespace sift::worker {

// The loaded module's parameters and buffers are registered, under the module's own dotted
// names, in a tree of plain torch::nn::Modules that mirrors its submodules: the optimizer,
// checkpoints, to(device) and init_from see them as they see a built-in model's, and update the
// very tensors the TorchScript module computes with.
class TorchScriptNet : public Net {
 public:
  TorchScriptNet(torch::jit::Module module, std::string path, int64_t outputs);
  // Runs the module's forward; checks that it returns [batch, outputs] (or [batch] for one output).
  torch::Tensor forward(torch::Tensor x) override;
  void train(bool on = true) override;

 private:
  torch::jit::Module module_;
  std::string path_;
  int64_t outputs_;
};

// Loads the file hp.path names (its {name}s filled from hp.attributes), sets the other
// attributes on it, and wraps it. Throws std::invalid_argument naming the file and the problem:
// a missing or unreadable file, an attribute the module lacks, a value of the wrong type.
std::shared_ptr<Net> MakeTorchScriptModel(const common::HParams& hp, int64_t outputs);

}  // namespace sift::worker

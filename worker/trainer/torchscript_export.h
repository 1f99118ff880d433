// The torch side of export.h: a built-in model rebuilt as a TorchScript module. Built-in models
// are torch::nn modules, which LibTorch cannot script; the export rebuilds each as a
// torch::jit::Module with the same parameters and buffers (same names: "fc1.weight") and a
// forward written out as TorchScript source by the model itself (Net::TorchScriptForward), in
// eval mode: dropout off, batch norm on its running statistics.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <string>

#include "worker/trainer/model_shape.h"
#include "worker/trainer/models.h"

namespace sift::worker {

// `net`'s eval-mode forward as a TorchScript module on the CPU that takes raw samples: it
// reshapes them to shape.sample, converts them to float, applies shape.input's scaling and
// standardization, and maps outputs back to the target's units when the target was
// standardized. Throws std::invalid_argument when the model has no TorchScript form.
torch::jit::Module ToTorchScript(const Net& net, const std::string& class_name,
                                 const ModelShape& shape = {});

}  // namespace sift::worker

// init_from: starting weights for every trial (fine-tuning), from a TorchScript file or a Sift
// checkpoint. Only the weights: the trial still starts at epoch 0 with a fresh optimizer.
#pragma once

#include <torch/torch.h>

#include <string>

namespace sift::worker {

// Copies into `model`'s parameters and buffers the tensors of the same name from `path`: a Sift
// checkpoint (by its magic bytes) or else a TorchScript file. Every tensor of the model must be
// there with the same shape, and the file must hold nothing else; otherwise throws
// std::invalid_argument naming the file and the tensor. `model` is unchanged on error.
void InitFrom(torch::nn::Module& model, const std::string& path);

}  // namespace sift::worker

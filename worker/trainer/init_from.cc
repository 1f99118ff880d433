#include "worker/trainer/init_from.h"

#include <torch/script.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "common/checkpoint_file.h"
#include "worker/trainer/checkpoint.h"

namespace sift::worker {
namespace {

using Tensors = std::map<std::string, torch::Tensor>;

bool IsSiftCheckpoint(const std::string& path) {
  const std::string magic = common::kCheckpointMagic;
  std::string head(magic.size(), '\0');
  std::ifstream in(path, std::ios::binary);
  return in.read(head.data(), static_cast<std::streamsize>(head.size())) && head == magic;
}

// A checkpoint's model archive nests one archive per submodule: flattened to dotted names.
void Flatten(torch::serialize::InputArchive& archive, const std::string& prefix, Tensors* out) {
  for (const auto& key : archive.keys()) {
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) {
      Flatten(child, prefix + key + ".", out);
      continue;
    }
    torch::Tensor t;
    if (archive.try_read(key, t)) (*out)[prefix + key] = t;
  }
}

Tensors ReadCheckpointModel(const std::string& path) {
  torch::serialize::InputArchive a, model;
  try {
    ReadCheckpointFile(path, torch::kCPU, &a);
    a.read("model", model);
  } catch (const std::exception& e) {  // CheckpointError, c10::Error
    throw std::invalid_argument(std::string("init_from: ") + e.what());
  }
  Tensors out;
  Flatten(model, "", &out);
  return out;
}

Tensors ReadTorchScript(const std::string& path) {
  torch::jit::Module m;
  try {
    m = torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    throw std::invalid_argument(
        "init_from: " + path +
        " is neither a Sift checkpoint nor a TorchScript file: " + e.what_without_backtrace());
  }
  Tensors out;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) out[p.name] = p.value;
  for (const auto& b : m.named_buffers(/*recurse=*/true)) out[b.name] = b.value;
  return out;
}

}  // namespace

void InitFrom(torch::nn::Module& model, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::invalid_argument("init_from: " + path + " is not a file");
  }
  Tensors from = IsSiftCheckpoint(path) ? ReadCheckpointModel(path) : ReadTorchScript(path);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (to, from), checked first
  const auto match = [&](const std::string& name, const torch::Tensor& to) {
    const auto it = from.find(name);
    if (it == from.end()) {
      throw std::invalid_argument("init_from: " + path + " has no tensor '" + name +
                                  "' that the model has");
    }
    if (it->second.sizes() != to.sizes()) {
      throw std::invalid_argument("init_from: " + path + ": '" + name + "' is " +
                                  c10::str(it->second.sizes()) + " there but " +
                                  c10::str(to.sizes()) + " in the model");
    }
    copies.emplace_back(to, it->second);
    from.erase(it);
  };
  for (const auto& p : model.named_parameters(/*recurse=*/true)) match(p.key(), p.value());
  for (const auto& b : model.named_buffers(/*recurse=*/true)) match(b.key(), b.value());
  if (!from.empty()) {
    throw std::invalid_argument("init_from: " + path + " has tensor '" + from.begin()->first +
                                "' that the model lacks: it holds another model");
  }
  torch::NoGradGuard no_grad;
  for (auto& [to, source] : copies) to.copy_(source);
}

}  // namespace sift::worker

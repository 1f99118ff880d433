#include "worker/trainer/export.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "worker/trainer/checkpoint.h"
#include "worker/trainer/torchscript_export.h"

namespace sift::worker {
namespace {

// The jit module mirroring `m`: its own parameters and buffers, contiguous CPU copies, and one
// child module per child. Each module gets its own class, all in one namespace: `qualified`
// then `qualified`_child (mangled where two would clash).
torch::jit::Module Mirror(const torch::nn::Module& m, const std::string& qualified,
                          const std::shared_ptr<torch::jit::CompilationUnit>& cu) {
  torch::jit::Module out(c10::QualifiedName(qualified), cu, /*shouldMangle=*/true);
  const auto copy = [](const torch::Tensor& t) {
    return t.detach().to(torch::kCPU).clone(at::MemoryFormat::Contiguous);
  };
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    out.register_parameter(p.key(), copy(p.value()).requires_grad_(true), /*is_buffer=*/false);
  }
  for (const auto& b : m.named_buffers(/*recurse=*/false))
    out.register_buffer(b.key(), copy(b.value()));
  for (const auto& c : m.named_children()) {
    out.register_module(c.key(), Mirror(*c.value(), qualified + "_" + c.key(), cu));
  }
  return out;
}

}  // namespace

std::string ModelSpecJson(const HParams& hp, const ModelShape& shape) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : ModelParams(hp)) {
    std::visit([&params, &n = name](const auto& v) { params[n] = v; }, value);
  }
  return nlohmann::json{{"params", params},
                        {"sample", shape.sample},
                        {"outputs", shape.outputs},
                        {"target_mean", shape.target_mean},
                        {"target_std", shape.target_std}}
      .dump();
}

void ParseModelSpec(const std::string& json, HParams* hp, ModelShape* shape) {
  try {
    const auto j = nlohmann::json::parse(json);
    search::Params params;
    for (const auto& [name, v] : j.at("params").items()) {
      if (v.is_string()) {
        params[name] = v.get<std::string>();
      } else if (v.is_number_integer()) {
        params[name] = v.get<int64_t>();
      } else {
        params[name] = v.get<double>();
      }
    }
    if (std::string e = ParseHParams(params, hp); !e.empty()) {
      throw std::runtime_error("model spec: " + e);
    }
    shape->sample = j.at("sample").get<std::vector<int64_t>>();
    shape->outputs = j.at("outputs").get<int64_t>();
    // Absent from checkpoints written before targets were standardized: the identity.
    shape->target_mean = j.value("target_mean", 0.0);
    shape->target_std = j.value("target_std", 1.0);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("model spec: ") + e.what());
  }
}

torch::jit::Module ToTorchScript(const Net& net, const std::string& class_name,
                                 const ModelShape& shape) {
  std::string source = net.TorchScriptForward();
  if (source.empty()) {
    throw std::invalid_argument("model '" + class_name + "' has no TorchScript export");
  }
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module module = Mirror(net, "__torch__.sift." + class_name, cu);
  if (shape.target_mean != 0.0 || shape.target_std != 1.0) {
    // The trained forward under another name; forward returns its output in the target's units.
    const std::string def = "def forward(";
    source.replace(source.find(def), def.size(), "def forward_standardized(");
    source += fmt::format(
        "def forward(self, x):\n    return self.forward_standardized(x) * {:.17g} + {:.17g}\n",
        shape.target_std, shape.target_mean);
  }
  module.define(source);
  module.eval();
  return module;
}

ExportedModel ExportCheckpoint(const std::string& checkpoint, const std::string& out) {
  torch::serialize::InputArchive archive;
  ReadCheckpointFile(checkpoint, torch::kCPU, &archive);
  ExportedModel m;
  c10::IValue spec;
  if (!archive.try_read("model_spec", spec) || !spec.isString()) {
    throw CheckpointError("cannot export " + checkpoint +
                          ": it does not record its model (written by a sift-worker before "
                          "export existed); train or resume the trial again to get one that does");
  }
  ParseModelSpec(spec.toStringRef(), &m.hp, &m.shape);
  auto net = MakeModel(m.hp, m.shape);
  torch::serialize::InputArchive model;
  try {
    archive.read("model", model);
    net->load(model);
  } catch (const c10::Error& e) {
    throw CheckpointError("cannot export " + checkpoint + ": " + e.what_without_backtrace());
  }
  net->eval();
  ToTorchScript(*net, m.hp.model, m.shape).save(out);
  return m;
}

}  // namespace sift::worker

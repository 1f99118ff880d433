#include "worker/trainer/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "worker/trainer/checkpoint.h"
#include "worker/trainer/model_spec.h"
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

torch::jit::Module ToTorchScript(const Net& net, const std::string& class_name,
                                 const ModelShape& shape) {
  std::string source = net.TorchScriptForward();
  if (source.empty()) {
    throw std::invalid_argument("model '" + class_name + "' has no TorchScript export");
  }
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module module = Mirror(net, "__torch__.sift." + class_name, cu);
  // The trained forward under another name; forward takes a raw sample (any numeric dtype),
  // prepares it as the worker did and returns outputs in the target's units.
  const std::string def = "def forward(";
  source.replace(source.find(def), def.size(), "def forward_prepared(");
  std::string dims = "x.size(0)";
  for (int64_t d : shape.sample) dims += fmt::format(", {}", d);
  std::string body = fmt::format("    x = x.reshape([{}])\n", dims);
  const data::InputPrep& in = shape.input;
  if (in.divisor != 1.0 || !in.mean.empty()) {
    // In double, as common/data standardizes: the same numbers the model was trained on.
    std::string prepared = "x.double()";
    if (in.divisor != 1.0) prepared = fmt::format("({} / {:.17g})", prepared, in.divisor);
    if (!in.mean.empty()) {
      const auto buffer = [&](const std::vector<double>& v) {
        auto t = torch::tensor(v, torch::kFloat64);
        return v.size() == 1 ? t : t.reshape(shape.sample);
      };
      module.register_buffer("input_mean", buffer(in.mean));
      module.register_buffer("input_std", buffer(in.std));
      prepared = fmt::format("(({} - self.input_mean) / self.input_std)", prepared);
    }
    body += fmt::format("    x = {}.float()\n", prepared);
  } else {
    body += "    x = x.float()\n";
  }
  if (shape.target_mean != 0.0 || shape.target_std != 1.0) {
    body += fmt::format("    return self.forward_prepared(x) * {:.17g} + {:.17g}\n",
                        shape.target_std, shape.target_mean);
  } else {
    body += "    return self.forward_prepared(x)\n";
  }
  source += "def forward(self, x):\n" + body;
  module.define(source);
  module.eval();
  return module;
}

std::string SidecarPath(const std::string& out) {
  std::filesystem::path p(out);
  if (p.extension() == ".json") {
    throw std::invalid_argument("--out " + out +
                                ": the sidecar .json beside it would be the same "
                                "file; name the model .pt");
  }
  return p.replace_extension(".json").string();
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
  const std::string sidecar = SidecarPath(out);
  ToTorchScript(*net, m.hp.model, m.shape).save(out);
  std::ofstream json(sidecar, std::ios::trunc);
  json << ExportSidecarJson(m.hp, m.shape);
  if (!json.flush()) throw std::runtime_error("cannot write " + sidecar);
  return m;
}

}  // namespace sift::worker

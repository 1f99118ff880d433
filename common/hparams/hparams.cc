#include "common/hparams/hparams.h"

#include <cmath>
#include <functional>
#include <map>

namespace sift::common {
namespace {

using search::ParamValue;

constexpr int64_t kMinWidth = 8;
constexpr int64_t kMaxWidth = 8192;
constexpr const char* kTorchScript = "torchscript";

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string GetInt(const std::string& name, const ParamValue& v, int64_t min, int64_t max,
                   int64_t* out) {
  double d;
  if (!search::AsDouble(v, &d) || d != std::floor(d)) return name + ": must be an integer";
  if (d < min || d > max) {
    return name + ": " + search::ToString(v) + " is outside [" + std::to_string(min) + ", " +
           std::to_string(max) + "]";
  }
  *out = static_cast<int64_t>(d);
  return "";
}

std::string GetDouble(const std::string& name, const ParamValue& v, double min, double max,
                      double* out) {
  double d;
  if (!search::AsDouble(v, &d) || !std::isfinite(d)) return name + ": must be a number";
  if (d < min || d > max) {
    return name + ": " + search::ToString(v) + " is outside [" + search::ToString(min) + ", " +
           search::ToString(max) + "]";
  }
  *out = d;
  return "";
}

std::string GetChoice(const std::string& name, const ParamValue& v,
                      const std::vector<std::string>& allowed, std::string* out) {
  const auto* s = std::get_if<std::string>(&v);
  for (const auto& a : allowed) {
    if (s && *s == a) {
      *out = a;
      return "";
    }
  }
  return name + ": '" + search::ToString(v) + "' is not one of " + Join(allowed);
}

std::string GetBool(const std::string& name, const ParamValue& v, bool* out) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (*s == "true" || *s == "True" || *s == "TRUE") return *out = true, "";
    if (*s == "false" || *s == "False" || *s == "FALSE") return *out = false, "";
  } else if (const auto* i = std::get_if<int64_t>(&v); i && (*i == 0 || *i == 1)) {
    *out = *i == 1;
    return "";
  }
  return name + ": '" + search::ToString(v) + "' is not true or false";
}

std::string GetPath(const std::string& name, const ParamValue& v, std::string* out) {
  *out = search::ToString(v);
  return out->empty() ? name + ": must not be empty" : "";
}

using Setter = std::function<std::string(const ParamValue&, HParams*)>;

// widthN: the MLP's hidden layer N on its own, for searches over layer shapes.
Setter WidthSetter(int64_t layer) {
  return [layer](const ParamValue& v, HParams* h) {
    return GetInt("width" + std::to_string(layer + 1), v, kMinWidth, kMaxWidth, &h->widths[layer]);
  };
}

const std::map<std::string, Setter>& Setters() {
  static const auto* setters = new std::map<std::string, Setter>{
      {"model",
       [](auto& v, auto* h) {
         return GetChoice("model", v, {"mlp", "cnn", "resnet", kTorchScript}, &h->model);
       }},
      {"path", [](auto& v, auto* h) { return GetPath("path", v, &h->path); }},
      {"init_from", [](auto& v, auto* h) { return GetPath("init_from", v, &h->init_from); }},
      {"hidden",
       [](auto& v, auto* h) { return GetInt("hidden", v, kMinWidth, kMaxWidth, &h->hidden); }},
      {"depth", [](auto& v, auto* h) { return GetInt("depth", v, 1, kMaxDepth, &h->depth); }},
      {"taper", [](auto& v, auto* h) { return GetDouble("taper", v, 0.25, 2.0, &h->taper); }},
      {"width1", WidthSetter(0)},
      {"width2", WidthSetter(1)},
      {"width3", WidthSetter(2)},
      {"width4", WidthSetter(3)},
      {"width5", WidthSetter(4)},
      {"width6", WidthSetter(5)},
      {"width7", WidthSetter(6)},
      {"width8", WidthSetter(7)},
      {"activation",
       [](auto& v, auto* h) {
         return GetChoice("activation", v, {"relu", "gelu", "silu", "tanh"}, &h->activation);
       }},
      {"norm",
       [](auto& v, auto* h) {
         return GetChoice("norm", v, {"none", "batch", "layer"}, &h->norm);
       }},
      {"pooling",
       [](auto& v, auto* h) {
         return GetChoice("pooling", v, {"max", "avg"}, &h->pooling);
       }},
      {"batch_norm", [](auto& v, auto* h) { return GetBool("batch_norm", v, &h->batch_norm); }},
      {"blocks", [](auto& v, auto* h) { return GetInt("blocks", v, 1, 8, &h->blocks); }},
      {"stages", [](auto& v, auto* h) { return GetInt("stages", v, 1, 4, &h->stages); }},
      {"channels", [](auto& v, auto* h) { return GetInt("channels", v, 4, 512, &h->channels); }},
      {"kernel_size",
       [](auto& v, auto* h) {
         std::string e = GetInt("kernel_size", v, 1, 7, &h->kernel_size);
         if (e.empty() && h->kernel_size % 2 == 0) e = "kernel_size: must be odd";
         return e;
       }},
      {"dropout", [](auto& v, auto* h) { return GetDouble("dropout", v, 0.0, 0.95, &h->dropout); }},
      {"optimizer",
       [](auto& v, auto* h) {
         return GetChoice("optimizer", v, {"sgd", "adam", "adamw"}, &h->optimizer);
       }},
      {"lr", [](auto& v, auto* h) { return GetDouble("lr", v, 1e-7, 10.0, &h->lr); }},
      {"momentum",
       [](auto& v, auto* h) { return GetDouble("momentum", v, 0.0, 0.999, &h->momentum); }},
      {"nesterov", [](auto& v, auto* h) { return GetInt("nesterov", v, 0, 1, &h->nesterov); }},
      {"weight_decay",
       [](auto& v, auto* h) { return GetDouble("weight_decay", v, 0.0, 1.0, &h->weight_decay); }},
      {"lr_schedule",
       [](auto& v, auto* h) {
         return GetChoice("lr_schedule", v, {"constant", "cosine", "step"}, &h->lr_schedule);
       }},
      {"warmup_epochs",
       [](auto& v, auto* h) { return GetInt("warmup_epochs", v, 0, 1000, &h->warmup_epochs); }},
      {"step_epochs",
       [](auto& v, auto* h) { return GetInt("step_epochs", v, 1, 1000, &h->step_epochs); }},
      {"step_gamma",
       [](auto& v, auto* h) { return GetDouble("step_gamma", v, 1e-4, 1.0, &h->step_gamma); }},
      {"loss",
       [](auto& v, auto* h) {
         return GetChoice("loss", v, {"mse", "huber"}, &h->loss);
       }},
      {"huber_delta",
       [](auto& v, auto* h) { return GetDouble("huber_delta", v, 1e-6, 1e6, &h->huber_delta); }},
      {"batch_size",
       [](auto& v, auto* h) { return GetInt("batch_size", v, 1, 65536, &h->batch_size); }},
      {"micro_batch",
       [](auto& v, auto* h) {
         if (const auto* s = std::get_if<std::string>(&v); s && *s == "auto") {
           h->micro_batch = kAutoMicroBatch;
           return std::string();
         }
         std::string e = GetInt("micro_batch", v, 0, 65536, &h->micro_batch);
         return e.empty() ? e : e + " (or 'auto')";
       }},
      {"accumulation_steps",
       [](auto& v, auto* h) {
         return GetInt("accumulation_steps", v, 1, 65536, &h->accumulation_steps);
       }},
      {"stop_on_divergence",
       [](auto& v, auto* h) { return GetBool("stop_on_divergence", v, &h->stop_on_divergence); }},
      {"precision",
       [](auto& v, auto* h) {
         return GetChoice("precision", v, {"fp32", "bf16", "fp16", "auto"}, &h->precision);
       }},
  };
  return *setters;
}

}  // namespace

const std::vector<std::string>& KnownHParamNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [name, setter] : Setters()) v->push_back(name);
    return v;
  }();
  return *names;
}

search::Params ModelParams(const HParams& hp) {
  search::Params p{{"model", hp.model},
                   {"hidden", hp.hidden},
                   {"depth", hp.depth},
                   {"channels", hp.channels},
                   {"kernel_size", hp.kernel_size},
                   {"dropout", hp.dropout},
                   {"activation", hp.activation},
                   {"taper", hp.taper},
                   {"norm", hp.norm},
                   {"pooling", hp.pooling},
                   {"batch_norm", std::string(hp.batch_norm ? "true" : "false")},
                   {"blocks", hp.blocks},
                   {"stages", hp.stages}};
  for (int64_t i = 0; i < kMaxDepth; ++i) {
    if (hp.widths[i] > 0) p["width" + std::to_string(i + 1)] = hp.widths[i];
  }
  return p;
}

int64_t DefaultBatchSize(int64_t train_rows) {
  int64_t b = 2;
  while (b * 2 <= train_rows / 10 && b * 2 <= kMaxDefaultBatch) b *= 2;
  return b;
}

std::string ParseHParams(const search::Params& params, HParams* out) {
  *out = HParams{};
  // A config that names no schedule decays to zero over the budget: the last epoch, which a
  // study ranks the trial by and keeps, is then a settled model rather than one mid-stride.
  out->lr_schedule = "cosine";
  const auto model = params.find("model");
  const bool torchscript = model != params.end() && search::ToString(model->second) == kTorchScript;
  for (const auto& [name, value] : params) {
    auto it = Setters().find(name);
    if (it == Setters().end()) {
      if (torchscript) {  // the worker checks it against the module's attributes
        out->attributes[name] = value;
        continue;
      }
      return name + ": not a trainer hyperparameter (known: " + Join(KnownHParamNames()) + ")";
    }
    if (std::string e = it->second(value, out); !e.empty()) return e;
  }
  out->batch_size_auto = !params.count("batch_size") && !params.count("micro_batch") &&
                         !params.count("accumulation_steps");
  if (torchscript && out->path.empty()) {
    return "path: model: torchscript needs the module's file (trainer: {path: models/net.pt})";
  }
  if (!torchscript && !out->path.empty()) return "path: only model: torchscript takes a file";
  if (out->micro_batch > 0 && out->batch_size % out->micro_batch != 0) {
    return "micro_batch: " + std::to_string(out->micro_batch) + " does not divide batch_size " +
           std::to_string(out->batch_size);
  }
  if (out->accumulation_steps > 0) {
    const int64_t k = out->accumulation_steps;
    if (out->batch_size % k != 0) {
      return "accumulation_steps: " + std::to_string(k) + " does not divide batch_size " +
             std::to_string(out->batch_size);
    }
    if (out->micro_batch != 0 && out->micro_batch * k != out->batch_size) {
      return "accumulation_steps: " + std::to_string(k) + " x micro_batch " +
             (MicroBatchIsAuto(*out) ? std::string("auto") : std::to_string(out->micro_batch)) +
             " is not batch_size " + std::to_string(out->batch_size) + "; set one of them";
    }
    out->micro_batch = k == 1 ? 0 : out->batch_size / k;
  }
  return "";
}

}  // namespace sift::common

#include "worker/trainer/model_spec.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sift::worker {
namespace {

using nlohmann::json;

json ColumnsJson(const std::vector<data::InputColumn>& columns) {
  json out = json::array();
  for (const auto& c : columns) {
    json column{{"name", c.name}};
    if (!c.vocabulary.empty()) column["one_hot"] = c.vocabulary;
    out.push_back(std::move(column));
  }
  return out;
}

// What the module does to its input before the network, in words, for the sidecar.
std::string ModuleDoes(const ModelShape& shape) {
  const data::InputPrep& in = shape.input;
  std::string out = "reshapes each sample to input_shape and converts it to float";
  if (in.divisor != 1.0) out += ", divides by " + json(in.divisor).dump();
  if (!in.mean.empty()) {
    out += in.mean.size() == 1 ? ", standardizes with one mean and deviation"
                               : ", standardizes each feature with the training rows' statistics";
  }
  if (shape.task == "regression") {
    out += "; returns predictions in the target's units";
  } else {
    out += "; returns one logit per class (argmax: the class)";
  }
  return out;
}

}  // namespace

std::string ModelSpecJson(const common::HParams& hp, const ModelShape& shape) {
  json params = json::object();
  for (const auto& [name, value] : common::ModelParams(hp)) {
    std::visit([&params, &n = name](const auto& v) { params[n] = v; }, value);
  }
  const data::InputPrep& in = shape.input;
  return json{{"params", params},
              {"sample", shape.sample},
              {"outputs", shape.outputs},
              {"target_mean", shape.target_mean},
              {"target_std", shape.target_std},
              {"task", shape.task},
              {"class_names", shape.class_names},
              {"input",
               {{"format", in.format},
                {"columns", ColumnsJson(in.columns)},
                {"divisor", in.divisor},
                {"mean", in.mean},
                {"std", in.std}}}}
      .dump();
}

void ParseModelSpec(const std::string& text, common::HParams* hp, ModelShape* shape) {
  try {
    const auto j = json::parse(text);
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
    if (std::string e = common::ParseHParams(params, hp); !e.empty()) {
      throw std::runtime_error("model spec: " + e);
    }
    shape->sample = j.at("sample").get<std::vector<int64_t>>();
    shape->outputs = j.at("outputs").get<int64_t>();
    // Absent from checkpoints written before targets were standardized: the identity.
    shape->target_mean = j.value("target_mean", 0.0);
    shape->target_std = j.value("target_std", 1.0);
    shape->task = j.value("task", std::string("classification"));
    shape->class_names = j.value("class_names", std::vector<std::string>{});
    shape->input = {};
    if (const auto in = j.find("input"); in != j.end()) {
      shape->input.format = in->value("format", std::string());
      for (const auto& c : in->at("columns")) {
        shape->input.columns.push_back(
            {c.at("name").get<std::string>(), c.value("one_hot", std::vector<std::string>{})});
      }
      shape->input.divisor = in->at("divisor").get<double>();
      shape->input.mean = in->at("mean").get<std::vector<double>>();
      shape->input.std = in->at("std").get<std::vector<double>>();
    }
    int64_t features = 1;
    for (int64_t d : shape->sample) features *= d;
    const auto n = static_cast<int64_t>(shape->input.mean.size());
    if (shape->input.std.size() != shape->input.mean.size() || (n > 1 && n != features)) {
      throw std::runtime_error("model spec: input mean and std have " + std::to_string(n) +
                               " and " + std::to_string(shape->input.std.size()) +
                               " values for samples of " + std::to_string(features) + " features");
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("model spec: ") + e.what());
  }
}

std::string ExportSidecarJson(const common::HParams& hp, const ModelShape& shape) {
  const data::InputPrep& in = shape.input;
  json out{{"sift_export", 1},
           {"model", hp.model},
           {"task", shape.task},
           {"input_shape", shape.sample},
           {"input_dtype", in.format == "idx" ? "uint8" : "float32"},
           {"module_does", ModuleDoes(shape)}};
  if (in.format == "idx") {
    out["input_values"] = "pixels as the IDX file holds them, 0 to 255";
  }
  if (!in.columns.empty()) out["columns"] = ColumnsJson(in.columns);
  if (shape.task != "regression") {
    std::vector<std::string> classes = shape.class_names;
    for (int64_t k = static_cast<int64_t>(classes.size()); k < shape.outputs; ++k) {
      classes.push_back(std::to_string(k));  // idx: the class is the label's value
    }
    out["classes"] = classes;
  }
  return out.dump(2) + "\n";
}

}  // namespace sift::worker

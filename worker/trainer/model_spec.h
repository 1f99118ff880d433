// What a checkpoint records of its model so that an export can rebuild it and take raw samples:
// the shape settings (ModelParams), the data's sample shape and outputs, the task and classes,
// and how a raw sample became the model's input, as JSON; and the sidecar JSON an export writes
// beside its module for what is not a tensor operation (column order, one-hot vocabularies).
#pragma once

#include <string>

#include "common/hparams/hparams.h"
#include "worker/trainer/model_shape.h"

namespace sift::worker {

std::string ModelSpecJson(const common::HParams& hp, const ModelShape& shape);
// Reads ModelSpecJson's output; throws std::runtime_error naming the problem. Specs written
// before a field existed read as that field's identity (no scaling, no columns).
void ParseModelSpec(const std::string& json, common::HParams* hp, ModelShape* shape);

// The sidecar (docs/workloads.md, "Using an exported model"): the task, the input's shape and
// dtype, the csv columns in order with each text column's one-hot vocabulary, the classes in
// output order, and what the module does itself.
std::string ExportSidecarJson(const common::HParams& hp, const ModelShape& shape);

}  // namespace sift::worker

// A TorchScript model's path may name trial parameters ("models/net_{width}.pt") so that an
// architecture choice picks a file. Torch-free: `sift validate` lists the files a search needs,
// the worker fills in one trial's values.
#pragma once

#include <string>
#include <vector>

#include "search/param_value.h"

namespace sift::common {

// The names in braces, in order of appearance, each once. "" or a problem (an unclosed brace,
// an empty name) in `problem`.
std::vector<std::string> PathParamNames(const std::string& path, std::string* problem);

// `path` with each {name} replaced by search::ToString of its value in `values`. Returns "" or
// the problem ("path: models/net_{width}.pt names 'width', which this trial does not set").
std::string FillPath(const std::string& path, const search::Params& values, std::string* out);

}  // namespace sift::common

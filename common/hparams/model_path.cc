#include "common/hparams/model_path.h"

#include <algorithm>

namespace sift::common {
namespace {

// Calls `name(n)` for every {n} and `text(t)` for the text between; returns "" or the problem.
template <typename OnText, typename OnName>
std::string Walk(const std::string& path, OnText text, OnName name) {
  size_t at = 0;
  while (at < path.size()) {
    const size_t open = path.find('{', at);
    if (open == std::string::npos) break;
    const size_t close = path.find('}', open);
    if (close == std::string::npos) return "path: " + path + ": '{' without a closing '}'";
    if (close == open + 1) return "path: " + path + ": '{}' names no parameter";
    text(path.substr(at, open - at));
    name(path.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  text(path.substr(std::min(at, path.size())));
  return "";
}

}  // namespace

std::vector<std::string> PathParamNames(const std::string& path, std::string* problem) {
  std::vector<std::string> names;
  *problem = Walk(
      path, [](const std::string&) {},
      [&](const std::string& n) {
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
      });
  return names;
}

std::string FillPath(const std::string& path, const search::Params& values, std::string* out) {
  std::string filled, missing;
  std::string problem = Walk(
      path, [&](const std::string& t) { filled += t; },
      [&](const std::string& n) {
        const auto it = values.find(n);
        if (it == values.end()) {
          if (missing.empty()) missing = n;
          return;
        }
        filled += search::ToString(it->second);
      });
  if (problem.empty() && !missing.empty()) {
    problem = "path: " + path + " names '" + missing + "', which this trial does not set";
  }
  if (problem.empty()) *out = filled;
  return problem;
}

}  // namespace sift::common

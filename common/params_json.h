// A trial's parameters as JSON text: how both stores keep them and how `sift-worker train
// --params` reads them. An int stays an int (JSON integer), a float a double, a choice a string.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "search/param_value.h"

namespace sift::common {

// As a JSON object (what results.json and the reports embed), and as its text.
nlohmann::json ParamsToJson(const search::Params& params);
std::string ParamsToJsonText(const search::Params& params);
// Throws std::runtime_error naming what is wrong: not JSON, not an object, or a value that is
// neither a number nor a string (named by its key).
search::Params ParamsFromJsonText(const std::string& text);

}  // namespace sift::common

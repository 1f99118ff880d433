// Typed hyperparameter values and assignments, shared by every searcher and scheduler.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace sift::search {

// One value: a float, an integer or a categorical label. Never stringly typed.
using ParamValue = std::variant<double, int64_t, std::string>;

// A full assignment, ordered by name so that iteration (and so hashing, logging) is deterministic.
using Params = std::map<std::string, ParamValue>;

// "0.001", "64", "adam": for logs, tables and CSV.
std::string ToString(const ParamValue& value);
// {"lr": 0.001, "opt": "adam"} style, for logs and error messages.
std::string ToString(const Params& params);

// The value as a double when it is numeric; categorical labels have none.
bool AsDouble(const ParamValue& value, double* out);

}  // namespace sift::search

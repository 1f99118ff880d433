// How both stores write a trial's parameters and a report's metrics: JSON text, so a value's
// type (int or double) and non-finite metrics survive the trip through either database.
#pragma once

#include <map>
#include <string>

#include "search/param_value.h"

namespace sift::coordinator {

std::string ParamsToJsonText(const search::Params& params);
search::Params ParamsFromJsonText(const std::string& text);
// Non-finite values (a diverging trial's) are stored as "NaN"/"Infinity" strings; older
// databases hold them as null, which reads back as NaN.
std::string MetricsToJsonText(const std::map<std::string, double>& metrics);
// Throws std::runtime_error naming `what` when `text` is not readable metrics.
std::map<std::string, double> MetricsFromJsonText(const std::string& text, const std::string& what);

}  // namespace sift::coordinator

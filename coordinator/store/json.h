// How both stores write a report's metrics: JSON text, so non-finite metrics survive the trip
// through either database (a trial's parameters: common/params_json.h).
#pragma once

#include <map>
#include <string>

namespace sift::coordinator {

// Non-finite values (a diverging trial's) are stored as "NaN"/"Infinity" strings; older
// databases hold them as null, which reads back as NaN.
std::string MetricsToJsonText(const std::map<std::string, double>& metrics);
// Throws std::runtime_error naming `what` when `text` is not readable metrics.
std::map<std::string, double> MetricsFromJsonText(const std::string& text, const std::string& what);

}  // namespace sift::coordinator

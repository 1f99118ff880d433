// Studies as Prometheus gauges and counters: trials by state, dollars (spent, wasted on lost
// work, idle), lease endings, best objective and budget, one series per study.
#pragma once

#include <string>
#include <vector>

#include "coordinator/core/summaries.h"

namespace sift::coordinator {

std::string StudyMetricsText(const std::vector<StudySummary>& studies);

// A label value with \, " and newlines escaped as the text format requires.
std::string PrometheusLabel(const std::string& value);

}  // namespace sift::coordinator

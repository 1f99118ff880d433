// The reporting contract of command trials: a line `{"sift": {"epoch": N, "metric": value, ...}}`
// on the program's stdout is one epoch's report; every other line is the program's own output.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace sift::worker {

struct ReportLine {
  int64_t epoch = 0;                      // epochs completed, >= 1
  std::map<std::string, double> metrics;  // everything but "epoch"
};

// nullopt when `line` is not a report (no top-level "sift" key). A line that is a report but
// malformed (bad JSON, no epoch, a metric that is not a number) returns nullopt with *error set
// to what is wrong; *error is cleared otherwise.
std::optional<ReportLine> ParseReportLine(const std::string& line, std::string* error);

}  // namespace sift::worker

// `sift report --html FILE`: one self-contained HTML page (inline SVG drawn here, a little inline
// script for hover and sorting, no network) of one or several studies, from the same records and
// functions as the text report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/report/html/charts.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {

struct HtmlReport {
  std::vector<HtmlStudy> studies;
  std::map<std::string, WorkerRecord> workers;  // by id
  double now = 0;                               // unix seconds: open leases run to here
  std::string source;                           // the database it was read from
};

// Reads every study (or `study_id` only, when > 0) of the SQLite database `db`, read-only.
// Throws std::runtime_error naming the file when it cannot be read.
HtmlReport LoadHtmlReport(const std::string& db, int64_t study_id, std::optional<double> target);

// The page of studies whose reports are already summarized (`sift run` at its end): the ledger's
// leases, idle stretches and workers come from `store`, the search space from each config.
HtmlReport HtmlReportFor(std::vector<StudyReport> reports, Store& store, const std::string& source);

std::string RenderHtmlReport(const HtmlReport& report);

// Writes the page to `path`; returns "" or the problem, naming the path.
std::string WriteHtmlReport(const HtmlReport& report, const std::string& path);

// `sift report --html FILE`: loads, writes and prints what it wrote; returns the exit code.
int HtmlReportCommand(const std::string& db, int64_t study_id, std::optional<double> target,
                      const std::string& path);

namespace html {
const char* PageStyle();  // page_assets.cc
const char* PageScript();
}  // namespace html

}  // namespace sift::coordinator

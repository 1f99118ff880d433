// The HTML report's charts, each an inline <svg> (or a table) drawn from a study's records.
// Every mark that stands for a trial carries data-t="STUDY-NUMBER"; the page's script shows that
// trial's row of the table (parameters, epochs, state, why it ended) when it is hovered.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "coordinator/report/frontier.h"
#include "coordinator/report/report.h"
#include "coordinator/store/records.h"
#include "search/space.h"

namespace sift::coordinator {

// One study's records as the HTML report reads them: the text report's StudyReport plus the
// ledger's leases (timeline, preemption markers, spend) and idle stretches.
struct HtmlStudy {
  StudyReport report;
  std::vector<SegmentRecord> segments;
  std::vector<IdleSegmentRecord> idle;
  search::SearchSpace space;  // from the study's config: parameter order, ranges and scales
};

namespace html {

inline constexpr size_t kMaxCurves = 400;      // learning curves drawn per study
inline constexpr size_t kMaxCurvePoints = 60;  // points per drawn curve
inline constexpr size_t kMaxParallelLines = 1500;

std::string ParetoChart(const HtmlStudy& s);  // chart_cost.cc
std::string BestSoFarChart(const std::vector<HtmlStudy>& studies, bool by_time);
std::string SpendChart(const HtmlStudy& s, double now);
std::string CurvesChart(const HtmlStudy& s);    // chart_curves.cc
std::string ParallelChart(const HtmlStudy& s);  // chart_params.cc
std::string ImportanceChart(const HtmlStudy& s);
std::string TimelineChart(const HtmlStudy& s,  // chart_timeline.cc
                          const std::map<std::string, WorkerRecord>& workers, double now);
// Several objectives or constraints (report/frontier.h): chart_frontier.cc.
// The study's frontier is computed once per page and handed to each.
std::string ObjectivePairChart(const HtmlStudy& s, const Frontier& frontier, size_t i,
                               size_t j);  // objective i on x, j on y
std::string HypervolumeChart(const HtmlStudy& s, const std::vector<HypervolumeStep>& curve,
                             bool by_time);
std::string ParetoSetTable(const HtmlStudy& s, const Frontier& frontier);
std::string TrialTable(const HtmlStudy& s);  // table.cc
std::string LevelsTable(const HtmlStudy& s);

}  // namespace html
}  // namespace sift::coordinator

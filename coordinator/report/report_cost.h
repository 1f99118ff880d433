// The cost controls in the reports: a study's tags, its forecast (open) or its recorded forecasts
// against what happened (ended), and `sift report --by tag`: dollars, trials and best results
// rolled up per tag across studies.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "coordinator/cost/forecast.h"
#include "coordinator/report/report.h"

namespace sift::coordinator {

// "tags: team=vision, project=ranking" ("" when it has none).
std::string FormatTags(const common::Tags& tags);

// Lines for the summary: the tags; an open study's forecast; an ended one's recorded forecasts,
// each against the outcome ("" when there is nothing to say).
std::string FormatCostSummary(const StudyReport& report);

// An ended study's recorded forecasts against the outcome, one line each.
std::vector<std::string> ForecastVersusActual(const StudySummary& study);

struct TagRollup {
  std::string key, value;  // value "(untagged)" / "(no KEY tag)": the studies without one
  int64_t studies = 0, trials = 0;
  double dollars = 0;
  struct Best {
    double value = 0;
    bool maximize = true;
    int64_t study = 0, trial = 0;
  };
  std::map<std::string, Best> best;  // by objective metric: only like is compared with like
};

// Per tag (key=value) over `studies`; `key` "" rolls up every key (a study counts once under
// each of its tags), else only that key. Sorted by key, then dollars (most first).
std::vector<TagRollup> RollUpByTag(const std::vector<StudySummary>& studies,
                                   const std::string& key);
std::string FormatTagRollup(const std::vector<TagRollup>& rows,
                            const std::vector<StudySummary>& studies);
std::string TagRollupJson(const std::vector<TagRollup>& rows);

// `sift report --by tag` or `--by tag:KEY`: the key ("" for every key), or the problem.
std::string ParseByTag(const std::string& by, std::string* key);

// The report's trials and study as a forecast's input (its target: the report's, else none).
ForecastInput ForecastInputOf(const StudyReport& report);

inline Forecast ForecastFinish(const StudyReport& report,
                               const std::vector<SegmentRecord>& segments, double at) {
  return MakeForecast(ForecastInputOf(report), segments, at);
}

}  // namespace sift::coordinator

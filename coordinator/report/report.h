// Turns a study's records into what users read: the per-trial table, results.csv, results.json
// (with curves, the cost/accuracy Pareto frontier and dollars to each best-so-far).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/core/summaries.h"
#include "search/objectives.h"

namespace sift::coordinator {

struct StudyReport {
  StudySummary study;
  std::vector<TrialSummary> trials;
  std::optional<double> target;  // objective value to reach (e.g. 0.85); dollars to it reported
  // How the figures were produced (workers, threads, allocator, BLAS), when known.
  std::map<std::string, std::string> environment;
  std::string checkpoint_dir;  // where the study's checkpoints are, when known
  // The config's objectives (the first is study.metric) and constraints, where the config is
  // known; none means study.metric alone. Several, or a constraint: see frontier.h.
  std::vector<search::Objective> objectives;
  std::vector<search::Constraint> constraints;
  // Population-based training's exploits (coordinator/report/report_pbt.h); none otherwise.
  std::vector<ExploitRecord> exploits;
};

// Scored and usable: a finite objective, not failed, not diverged. Only these can be best, sit on
// a frontier or count towards a parameter's importance.
bool Ranked(const TrialSummary& t);

// Which trials a Pareto frontier counts. A trial stopped after one epoch is cheap by design, so a
// frontier over all trials answers "what is the best value for the money so far" while one over
// completed trials answers "what does a fully trained model cost"; reports show both, labelled.
enum class FrontierOver {
  kCompleted,  // trained to their last epoch (COMPLETED)
  kAll,        // every scored trial that did not fail, stopped ones at their last value
};
const char* Describe(FrontierOver over);

// Trial numbers on the Pareto frontier of (dollars low, objective good), cheapest first; with
// constraints, of the feasible trials only (frontier.h's Feasible).
std::vector<int64_t> ParetoFrontier(const StudyReport& report,
                                    FrontierOver over = FrontierOver::kAll);

// (cumulative dollars, best objective so far, trial number, when it ended) each time the best
// improved, in order of trial end.
struct BestSoFar {
  double dollars;
  double value;
  int64_t trial;
  double at = 0;  // the trial's ended_at (unix seconds): the curve against wall time
};
std::vector<BestSoFar> BestSoFarCurve(const StudyReport& report);

// A trial's params as every report prints them: "name=value" pairs, space-separated.
std::string ParamsText(const search::Params& params);

std::string FormatTable(const StudyReport& report);
std::string FormatSummary(const StudyReport& report);  // best trial, test accuracy, totals
std::string ToCsv(const StudyReport& report);
std::string ToJson(const StudyReport& report);

// Writes results.csv and results.json into `dir` (created if missing); returns "" or the problem.
std::string WriteReportFiles(const StudyReport& report, const std::string& dir);

}  // namespace sift::coordinator

#include "coordinator/report/study_reports.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <stdexcept>

#include "coordinator/core/coordinator.h"  // SystemNow
#include "coordinator/core/stored_study.h"
#include "coordinator/core/summaries.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

// One study from the Store: its summary, and with `trials` its trials' summaries too. Nothing
// when its config no longer parses (logged, as a coordinator skips it).
std::optional<StudyReport> LoadStudy(Store& store, const StudyRecord& s, bool trials, double now) {
  const auto events = store.ListStudyEvents(s.id);
  common::StudyConfig config;
  if (std::string problem = ParseStoredConfig(s, events, &config); !problem.empty()) {
    spdlog::error("study {} ({}) cannot be read: {}", s.id, s.name, problem);
    return std::nullopt;
  }
  auto objectives = config.objectives;
  auto constraints = config.constraints;
  StudyRunner runner(s.id, std::move(config), s.created_at);
  const auto trial_rows = store.ListTrials(s.id);
  const auto segments = store.ListSegments(s.id);
  std::vector<ReportRecord> reports;
  RestoreRunner(
      s, trial_rows,
      [&](const std::function<void(const ReportRecord&)>& apply) {
        store.ForEachReport(s.id, [&](const ReportRecord& r) {
          apply(r);
          if (trials) reports.push_back(r);
        });
      },
      events, &runner);
  Ledger ledger;
  ledger.RestoreStudy(s.id, segments, now);
  StudyReport out;
  out.objectives = std::move(objectives);
  out.constraints = std::move(constraints);
  out.study = SummarizeStudy(s, runner, events, segments, store.ListIdleSegments(s.id),
                             ledger.StudyDollars(s.id, now), now);
  if (IsOpen(runner.state())) {
    if (Forecast f = ForecastOf(runner, trial_rows, segments, now); f.possible) {
      out.study.forecast = f;
    }
  }
  if (!trials) return out;
  ResumePoints resume;
  for (const auto& r : reports) resume.NoteReport(r);
  for (const auto& seg : segments) resume.NoteClosedSegment(seg);
  std::map<int64_t, EvaluationRecord> evaluations;
  for (auto& e : store.ListEvaluations(s.id)) {
    // A running one's lease ended with its coordinator, as a restart sees it: it is pending.
    if (e.state == EvaluationState::kRunning) e.state = EvaluationState::kPending;
    evaluations[e.number] = e;
  }
  TrialExtras extras;
  extras.checkpoint = [&](int64_t number) {
    auto it = resume.points().find(number);
    return it == resume.points().end() ? std::string() : it->second;
  };
  extras.evaluation = [&](int64_t number) -> std::optional<EvaluationRecord> {
    auto it = evaluations.find(number);
    if (it == evaluations.end()) return std::nullopt;
    return it->second;
  };
  out.trials = SummarizeTrials(runner, trial_rows, reports, segments, now, extras);
  out.exploits = store.ListExploits(s.id);
  return out;
}

}  // namespace

std::vector<StudyReport> LoadStudyReports(const std::string& db, int64_t study_id,
                                          std::optional<double> target) {
  auto store = OpenStoreReadOnly(db);
  const double now = SystemNow();
  std::vector<StudyReport> reports;
  for (const auto& s : store->ListStudies()) {
    if (study_id > 0 && s.id != study_id) continue;
    auto r = LoadStudy(*store, s, true, now);
    if (!r) continue;
    r->target = target;
    r->checkpoint_dir = CheckpointDirBeside(db, s.id);
    reports.push_back(std::move(*r));
  }
  if (study_id > 0 && reports.empty()) {
    throw std::runtime_error(RedactDbUrl(db) + ": no study " + std::to_string(study_id));
  }
  return reports;
}

std::vector<StudySummary> LoadStudySummaries(const std::string& db) {
  auto store = OpenStoreReadOnly(db);
  const double now = SystemNow();
  std::vector<StudySummary> out;
  for (const auto& s : store->ListStudies()) {
    if (auto r = LoadStudy(*store, s, false, now)) out.push_back(std::move(r->study));
  }
  return out;
}

}  // namespace sift::coordinator

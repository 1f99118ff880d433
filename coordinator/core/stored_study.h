// A study as the Store holds it, rebuilt without a Coordinator: what a restarting coordinator
// and the reports (coordinator/report/study_reports.h) both read, so the two agree.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/core/study_runner.h"
#include "coordinator/cost/forecast.h"
#include "coordinator/store/records.h"
#include "coordinator/store/store.h"
#include "search/priors.h"

namespace sift::coordinator {

// Parses a stored study's config as when it was created: relative data paths resolve from the
// folder of the config file its "created" event names. Returns "" or the first problem.
std::string ParseStoredConfig(const StudyRecord& study, const std::vector<StudyEventRecord>& events,
                              common::StudyConfig* config);

// warm_start: the completed and early-stopped trials of the earlier studies `config` names (not
// failed or diverged ones, nor those still open), each with its last
// value of this study's objective metric (oriented by this study's direction), read from `own`
// (this coordinator's database) or a read-only open of warm_start.database. Returns "" or the
// problem, naming the study: an id that is not there, a config that cannot be read, a search
// space with no parameter of the same name and type as this one's.
std::string LoadWarmStart(const common::StudyConfig& config, Store& own, search::Priors* priors);

// The runner's history from the Store: its trials and reports, the study's state if it ended,
// and its control events (pauses, budget changes). Costs are the caller's (the ledger's).
void RestoreRunner(const StudyRecord& study, const std::vector<TrialRecord>& trials,
                   const StudyRunner::ReportSource& reports,
                   const std::vector<StudyEventRecord>& events, StudyRunner* runner);

// Each trial's newest checkpoint, where it resumes: a checkpointed report's, or the one a
// preempted or paused lease handed back (newer on a tie: it came after the report). Feed it
// the reports first, then the closed segments.
class ResumePoints {
 public:
  void NoteReport(const ReportRecord& r) { Note(r.number, r.created_at, r.checkpoint); }
  void NoteClosedSegment(const SegmentRecord& seg) {
    if (seg.end) Note(seg.number, *seg.end, seg.checkpoint);
  }
  const std::map<int64_t, std::string>& points() const { return points_; }

 private:
  void Note(int64_t number, double at, const std::string& checkpoint) {
    if (checkpoint.empty()) return;
    auto [newest, fresh] = at_.emplace(number, at);
    if (fresh || at >= newest->second) {
      newest->second = at;
      points_[number] = checkpoint;
    }
  }
  std::map<int64_t, double> at_;
  std::map<int64_t, std::string> points_;
};

// The decision a stored report answered with (a retried report gets the same answer).
search::Decision DecisionOf(const ReportRecord& r);

// An open study's forecast now: its trials' rows, the values the runner holds, its segments.
Forecast ForecastOf(const StudyRunner& runner, const std::vector<TrialRecord>& trials,
                    const std::vector<SegmentRecord>& segments, double now);

}  // namespace sift::coordinator

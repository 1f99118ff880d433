#include "coordinator/core/stored_study.h"

#include "common/config/config_limits.h"
#include "coordinator/core/coordinator.h"  // CreatedFromDir
#include "coordinator/core/study_control.h"

namespace sift::coordinator {

std::string ParseStoredConfig(const StudyRecord& study, const std::vector<StudyEventRecord>& events,
                              common::StudyConfig* config) {
  auto errors =
      common::ParseStudyConfig(study.config_text, "study " + std::to_string(study.id), config,
                               common::ConfigLimits::None(), CreatedFromDir(events));
  return errors.empty() ? "" : errors.front();
}

void RestoreRunner(const StudyRecord& study, const std::vector<TrialRecord>& trials,
                   const StudyRunner::ReportSource& reports,
                   const std::vector<StudyEventRecord>& events, StudyRunner* runner) {
  runner->RestoreFrom(trials, reports);
  if (study.state != StudyState::kRunning) runner->ApplyStudyState(study.state, study.end_reason);
  ReplayStudyEvents(events, runner);
}

search::Decision DecisionOf(const ReportRecord& r) {
  search::Decision d;
  d.action = r.decision == "STOP"    ? search::Action::kStop
             : r.decision == "PAUSE" ? search::Action::kPause
                                     : search::Action::kContinue;
  d.reason = r.reason;
  return d;
}

Forecast ForecastOf(const StudyRunner& runner, const std::vector<TrialRecord>& trials,
                    const std::vector<SegmentRecord>& segments, double now) {
  ForecastInput in;
  in.start = runner.created_at();
  in.budget = runner.config().budget;
  in.maximize = runner.config().objective.maximize;
  in.target = runner.config().target;
  const auto& view = runner.view().trials;
  for (const auto& t : trials) {
    const auto n = static_cast<size_t>(t.number);
    if (in.trials.size() <= n) in.trials.resize(n + 1, ForecastTrial{1e300, {}, {}});
    ForecastTrial& ft = in.trials[n];
    ft.created_at = t.created_at;
    if (search::IsTerminal(t.state)) ft.ended_at = t.ended_at;
    const bool ranked = t.state != search::TrialState::kFailed &&
                        t.state != search::TrialState::kDiverged;
    if (ranked && n < view.size()) ft.value = view[n].LastValue();
  }
  return MakeForecast(in, segments, now);
}

}  // namespace sift::coordinator

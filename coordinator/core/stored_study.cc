#include "coordinator/core/stored_study.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <map>
#include <memory>

#include "common/config/config_limits.h"
#include "coordinator/core/coordinator.h"  // CreatedFromDir
#include "coordinator/core/study_control.h"

namespace sift::coordinator {

std::string ParseStoredConfig(const StudyRecord& study, const std::vector<StudyEventRecord>& events,
                              common::StudyConfig* config) {
  auto errors =
      common::ParseStudyConfig(study.config_text, "study " + std::to_string(study.id), config,
                               common::ConfigLimits::None(), CreatedFromDir(events));
  // A warm start's database deleted since creation costs the study its priors, not its life
  // (nor its reports): it goes on without them.
  const std::string gone = "warm_start.database: no such database file";
  if (errors.size() == 1 && errors[0].rfind(gone, 0) == 0) {
    spdlog::warn("study {} ({}): {}; it goes on without the earlier results", study.id, study.name,
                 errors[0]);
    config->warm_start = {};
    return "";
  }
  return errors.empty() ? "" : errors.front();
}

std::string LoadWarmStart(const common::StudyConfig& config, Store& own, search::Priors* priors) {
  *priors = {};
  priors->weight = config.warm_start.weight;
  if (!config.warm_start.enabled()) return "";
  const std::string& db = config.warm_start.database;
  std::unique_ptr<Store> other;
  if (!db.empty()) {
    try {
      other = OpenStoreReadOnly(db);
    } catch (const std::exception& e) {
      return "warm_start.database: " + std::string(e.what());
    }
  }
  Store& store = other ? *other : own;
  const std::string where = db.empty() ? "this coordinator's database" : RedactDbUrl(db);
  const std::string& metric = config.objective.metric;
  for (int64_t id : config.warm_start.studies) {
    const std::string name = "warm_start.studies: study " + std::to_string(id);
    const auto record = store.GetStudy(id);
    if (!record) return name + ": no such study in " + where;
    common::StudyConfig earlier;
    if (std::string p = ParseStoredConfig(*record, store.ListStudyEvents(id), &earlier);
        !p.empty()) {
      return name + " (" + record->name + "): its config cannot be read: " + p;
    }
    if (search::SharedParams(config.space, earlier.space).empty()) {
      return name + " (" + record->name + ") shares no parameter with this search space " +
             "(same name and type)";
    }
    std::map<int64_t, std::pair<int64_t, double>> last;  // trial -> (epoch, value)
    store.ForEachReport(id, [&](const ReportRecord& r) {
      auto it = r.metrics.find(metric);
      if (it == r.metrics.end() || !std::isfinite(it->second)) return;
      auto [at, fresh] = last.emplace(r.number, std::make_pair(r.epoch, it->second));
      if (!fresh && r.epoch >= at->second.first) at->second = {r.epoch, it->second};
    });
    for (const TrialRecord& t : store.ListTrials(id)) {
      auto it = last.find(t.number);
      // Stopped trials stand for what they reached, as in this study's own observations.
      const bool ended =
          t.state == search::TrialState::kCompleted || t.state == search::TrialState::kStopped;
      if (!ended || it == last.end()) continue;
      const double v = it->second.second;
      priors->points.push_back({t.params, config.objective.maximize ? v : -v, id});
    }
  }
  return "";
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
    const bool ranked =
        t.state != search::TrialState::kFailed && t.state != search::TrialState::kDiverged;
    if (ranked && n < view.size()) ft.value = view[n].LastValue();
  }
  return MakeForecast(in, segments, now);
}

}  // namespace sift::coordinator

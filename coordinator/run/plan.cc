#include "coordinator/run/plan.h"

#include "common/config/config_diff.h"

namespace sift::coordinator {

RunPlan PlanRun(const std::vector<StudyRecord>& studies, const std::string& config_text,
                const std::string& config_path, const std::string& dir, bool resume,
                bool start_new) {
  RunPlan plan;
  plan.config_text = config_text;
  const StudyRecord* target = nullptr;  // the newest unfinished study, else the newest one
  for (const auto& s : studies) {
    if (IsOpen(s.state)) target = &s;
  }
  if (start_new) {
    for (const auto& s : studies) {
      if (IsOpen(s.state)) plan.cancel.push_back(s.id);
    }
    return plan;
  }
  if (!target && !studies.empty()) target = &studies.back();
  if (!target) {
    if (resume) {
      plan.problem =
          dir + ": no study to resume here; start one with: sift run CONFIG --out " + dir;
    }
    return plan;
  }
  const std::string which = "study " + std::to_string(target->id) + " '" + target->name + "'";
  if (!IsOpen(target->state)) {
    plan.problem = dir + " holds " + which + ", which has ended (" + ToString(target->state) +
                   (target->end_reason.empty() ? "" : ": " + target->end_reason) +
                   "); its results are in " + dir +
                   "/results.csv. Pass --new to start another "
                   "study in this directory, or choose another --out.";
    return plan;
  }
  if (!config_text.empty()) {
    const std::string diff =
        common::FirstConfigDifference(target->config_text, config_text, "the study", config_path);
    if (!diff.empty()) {
      plan.problem = dir + " holds unfinished " + which + " (" + ToString(target->state) +
                     ") of another config: " + diff +
                     ". Run it with the same config to resume it, or pass --new to start afresh.";
      return plan;
    }
  }
  plan.resume_id = target->id;
  plan.config_text = target->config_text;
  for (const auto& s : studies) {
    if (IsOpen(s.state) && s.id != target->id) plan.pause.push_back(s.id);
  }
  return plan;
}

}  // namespace sift::coordinator

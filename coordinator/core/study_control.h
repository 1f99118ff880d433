// Pause, resume and budget changes of a study, as its audit trail (study_events) records them.
// The Coordinator's control methods live in study_control.cc; this header holds what the
// restore path shares with them.
#pragma once

#include <string>
#include <vector>

#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

// Checks a budget change against the study's trials so far; "" or the problem, naming the field.
std::string CheckBudgetChange(const BudgetChange& change, int64_t trials_created);
// The change as the JSON kept in an event's detail, and back.
std::string BudgetChangeToJson(const BudgetChange& change);
BudgetChange BudgetChangeFromJson(const std::string& json);
void ApplyBudgetChange(const BudgetChange& change, common::BudgetConfig* budget);

// Re-applies what a study's events changed (budgets, paused time) after a restart.
void ReplayStudyEvents(const std::vector<StudyEventRecord>& events, StudyRunner* runner);

}  // namespace sift::coordinator

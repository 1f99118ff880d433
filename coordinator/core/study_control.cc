#include "coordinator/core/study_control.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sift::coordinator {

using search::TrialState;

namespace {

std::string Who(const std::string& user) { return user.empty() ? "unknown" : user; }

std::string Number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

std::string CheckBudgetChange(const BudgetChange& change, int64_t trials_created) {
  if (!change.max_dollars && !change.max_hours && !change.max_trials) {
    return "nothing to change: give max_dollars, max_hours or max_trials";
  }
  if (change.max_dollars && !(std::isfinite(*change.max_dollars) && *change.max_dollars > 0)) {
    return "max_dollars: must be a number > 0, got " + Number(*change.max_dollars);
  }
  if (change.max_hours && !(std::isfinite(*change.max_hours) && *change.max_hours > 0)) {
    return "max_hours: must be a number > 0, got " + Number(*change.max_hours);
  }
  if (change.max_trials && *change.max_trials < 1) {
    return "max_trials: must be >= 1, got " + std::to_string(*change.max_trials);
  }
  if (change.max_trials && *change.max_trials < trials_created) {
    return "max_trials: " + std::to_string(*change.max_trials) + " is fewer than the " +
           std::to_string(trials_created) + " trials already created";
  }
  return "";
}

std::string BudgetChangeToJson(const BudgetChange& change) {
  nlohmann::json j = nlohmann::json::object();
  if (change.max_dollars) j["max_dollars"] = *change.max_dollars;
  if (change.max_hours) j["max_hours"] = *change.max_hours;
  if (change.max_trials) j["max_trials"] = *change.max_trials;
  return j.dump();
}

BudgetChange BudgetChangeFromJson(const std::string& text) {
  BudgetChange change;
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return change;
  if (j.contains("max_dollars")) change.max_dollars = j["max_dollars"].get<double>();
  if (j.contains("max_hours")) change.max_hours = j["max_hours"].get<double>();
  if (j.contains("max_trials")) change.max_trials = j["max_trials"].get<int64_t>();
  return change;
}

void ApplyBudgetChange(const BudgetChange& change, common::BudgetConfig* budget) {
  if (change.max_dollars) budget->max_dollars = *change.max_dollars;
  if (change.max_hours) budget->max_hours = *change.max_hours;
  if (change.max_trials) budget->max_trials = *change.max_trials;
}

void ReplayStudyEvents(const std::vector<StudyEventRecord>& events, StudyRunner* runner) {
  for (const auto& e : events) {
    if (e.action == "paused") {
      runner->NotePaused(e.at);
    } else if (e.action == "resumed") {
      runner->NoteResumed(e.at);
    } else if (e.action == "budget") {
      common::BudgetConfig budget = runner->config().budget;
      ApplyBudgetChange(BudgetChangeFromJson(e.detail), &budget);
      runner->ApplyBudget(budget);
    }
  }
}

Status Coordinator::SetOpenState(ServedStudy& study, StudyState state, const std::string& action,
                                 const std::string& user, const std::string& detail) {
  StudyRunner* runner = study.runner.get();
  const int64_t id = study.id();
  if (!IsOpen(runner->state())) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "study " + std::to_string(id) + " is " + ToString(runner->state()) + " (" +
                             runner->end_reason() +
                             "); only a running or paused study can "
                             "be " +
                             action);
  }
  if (runner->state() == state) return Status::Ok();
  const double now = Now();
  const std::string reason =
      state == StudyState::kPaused
          ? "paused by " + Who(user) + (detail.empty() ? "" : " (" + detail + ")")
          : "";
  try {
    commit_->Run([&] {
      store_->UpdateStudy(id, state, reason, 0);
      store_->InsertStudyEvent({id, now, Who(user), action, detail});
    });
  } catch (const std::exception& e) {
    return StorageError(e, "the study's new state");
  }
  runner->ApplyStudyState(state, reason);
  if (state == StudyState::kPaused) {
    runner->NotePaused(now);
  } else {
    runner->NoteResumed(now);
  }
  spdlog::info("[study {}] {} by {}{}", id, action, Who(user),
               detail.empty() ? "" : " (" + detail + ")");
  return Status::Ok();
}

Status Coordinator::PauseStudy(int64_t id, const std::string& user, const std::string& detail) {
  LockedStudy study = LockStudy(id);
  if (!study) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  return SetOpenState(*study, StudyState::kPaused, "paused", user, detail);
}

Status Coordinator::ResumeStudy(int64_t id, const std::string& user, const std::string& detail) {
  LockedStudy study = LockStudy(id);
  if (!study) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  return SetOpenState(*study, StudyState::kRunning, "resumed", user, detail);
}

Status Coordinator::UpdateBudget(int64_t id, const BudgetChange& change, const std::string& user) {
  LockedStudy study = LockStudy(id);
  if (!study) return Status::Error(Status::Code::kNotFound, "no study " + std::to_string(id));
  StudyRunner* runner = study->runner.get();
  if (!IsOpen(runner->state())) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "study " + std::to_string(id) + " is " + ToString(runner->state()) +
                             "; only a running or paused study's budget can change");
  }
  const auto created = static_cast<int64_t>(runner->view().trials.size());
  if (std::string problem = CheckBudgetChange(change, created); !problem.empty()) {
    return Status::Error(Status::Code::kInvalidArgument, problem);
  }
  const double now = Now();
  const std::string detail = BudgetChangeToJson(change);
  try {
    store_->InsertStudyEvent({id, now, Who(user), "budget", detail});
  } catch (const std::exception& e) {
    return StorageError(e, "the budget change");
  }
  common::BudgetConfig budget = runner->config().budget;
  ApplyBudgetChange(change, &budget);
  runner->ApplyBudget(budget);
  spdlog::info("[study {}] budget changed by {}: {}", id, Who(user), detail);
  // A lowered budget may end the study now; a raised one applies to the next AcquireTrial.
  // Thresholds it puts behind the spend are announced first, each once.
  costs_.FireBudgetAlerts(*study, StudyDollars(id, now), now);
  MaybeFinishStudy(*study, now);
  return Status::Ok();
}

int Coordinator::InterruptLeases(int64_t study_id) {
  LockedStudy study = LockStudy(study_id);
  if (!study) return 0;
  const double now = Now();
  std::vector<std::pair<std::string, double>> leases;  // (id, wasted seconds)
  {
    std::lock_guard<std::mutex> table(table_mu_);
    for (const auto& id : leases_.OfStudy(study_id)) {
      if (leases_.Find(id)->completing.valid()) continue;  // ends as its completion commits
      leases.emplace_back(id, ledger_.LostSecondsAt(id, now));
    }
  }
  int ended = 0;
  for (const auto& [id, wasted] : leases) {
    ended +=
        lease_endings_.EndLeaseAndRequeue(*study, id, now, kStudyPausedSegment, "", wasted).ok();
  }
  return ended;
}

}  // namespace sift::coordinator

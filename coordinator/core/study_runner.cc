#include "coordinator/core/study_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "search/enqueued_searcher.h"
#include "search/factory.h"

namespace sift::coordinator {

using search::TrialState;

namespace {

std::string Dollars(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.4f", d);
  return buf;
}

}  // namespace

StudyRunner::StudyRunner(int64_t id, common::StudyConfig config, double created_at,
                         search::Priors priors)
    : id_(id), config_(std::move(config)), created_at_(created_at), priors_(std::move(priors)) {
  MakeAlgorithms();
  view_.space = &config_.space;
  view_.objective = config_.objective;
  view_.seed = config_.seed;
  view_.max_resource = config_.budget.max_epochs;
}

void StudyRunner::MakeAlgorithms() {
  std::vector<std::string> errors;
  searcher_ =
      search::MakeSearcher(config_.searcher.type, config_.searcher.options, config_.space, &errors);
  if (searcher_ && !priors_.points.empty()) searcher_->SetPriors(priors_);
  if (searcher_ && !config_.enqueue.empty()) {
    searcher_ = std::make_unique<search::EnqueuedSearcher>(config_.enqueue, std::move(searcher_));
  }
  search::SchedulerContext context{config_.budget.max_epochs, config_.objective.maximize};
  scheduler_ =
      search::MakeScheduler(config_.scheduler.type, config_.scheduler.options, context, &errors);
  if (!searcher_ || !scheduler_) {
    throw std::invalid_argument("study " + std::to_string(id_) + ": " +
                                (errors.empty() ? "invalid algorithms" : errors.front()));
  }
}

void StudyRunner::Rebuild(const std::vector<TrialRecord>& trials,
                          const std::vector<ReportRecord>& reports) {
  RebuildFrom(trials, [&](const std::function<void(const ReportRecord&)>& fn) {
    for (const auto& r : reports) fn(r);
  });
}

void StudyRunner::RebuildFrom(const std::vector<TrialRecord>& trials, const ReportSource& reports) {
  std::vector<std::pair<double, double>> costs;
  for (const auto& t : view_.trials) costs.emplace_back(t.cost_dollars, t.train_seconds);
  MakeAlgorithms();
  RestoreFrom(trials, reports);
  for (size_t i = 0; i < costs.size() && i < view_.trials.size(); ++i) {
    view_.trials[i].cost_dollars = costs[i].first;
    view_.trials[i].train_seconds = costs[i].second;
  }
}

void StudyRunner::Restore(const std::vector<TrialRecord>& trials,
                          const std::vector<ReportRecord>& reports) {
  RestoreFrom(trials, [&](const std::function<void(const ReportRecord&)>& fn) {
    for (const auto& r : reports) fn(r);
  });
}

void StudyRunner::RestoreFrom(const std::vector<TrialRecord>& trials, const ReportSource& reports) {
  view_.trials.clear();
  in_state_ = {};
  pending_.clear();
  for (const auto& t : trials) {
    if (t.number != static_cast<int64_t>(view_.trials.size())) {
      throw std::runtime_error("study " + std::to_string(id_) + ": trial numbers have a gap at " +
                               std::to_string(t.number));
    }
    ApplyNewTrial(t.number, t.params);
    ApplyState(t.number, t.state);
  }
  reports([&](const ReportRecord& r) {
    auto it = r.metrics.find(config_.objective.metric);
    // Non-finite values (a diverged trial's last report) never enter the view, as when applied.
    if (it != r.metrics.end() && std::isfinite(it->second) &&
        r.number < static_cast<int64_t>(view_.trials.size())) {
      ApplyReport(r.number, r.epoch, it->second);
    }
  });
  for (auto& t : view_.trials) {
    if (search::IsTerminal(t.state)) t.values.shrink_to_fit();
  }
}

bool StudyRunner::BudgetExhausted(double now, double spent, std::string* why) const {
  const auto& b = config_.budget;
  if (b.max_dollars > 0 && spent >= b.max_dollars) {
    *why = "budget: " + Dollars(spent) + " spent of " + Dollars(b.max_dollars);
    return true;
  }
  for (const auto& q : quotas_) {
    if (q.spent >= q.limit) {
      *why = "quota " + q.name + ": " + Dollars(q.spent) + " spent of " + Dollars(q.limit) +
             " by the studies tagged so";
      return true;
    }
  }
  const double elapsed = now - created_at_ - paused_seconds_;
  if (b.max_hours > 0 && elapsed >= b.max_hours * 3600.0) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "budget: %.2f h elapsed of %.2f h", elapsed / 3600,
                  b.max_hours);
    *why = buf;
    return true;
  }
  return false;
}

bool StudyRunner::CanAffordNewTrial(double spent, std::string* why) const {
  const double budget = config_.budget.max_dollars;
  if (budget <= 0 && quotas_.empty()) return true;
  double dollars = 0, epochs = 0;
  for (const auto& t : view_.trials) {
    if (t.cost_dollars > 0 && t.LastResource() > 0) {
      dollars += t.cost_dollars;
      epochs += static_cast<double>(t.LastResource());
    }
  }
  if (epochs == 0) return true;  // nothing measured yet
  const double per_epoch = dollars / epochs;
  const double committed = per_epoch * static_cast<double>(CountInState(TrialState::kRunning) + 1);
  // A quota is spent by other studies too; this one's next epochs are what it can foresee.
  const auto overshoots = [&](const std::string& what, double used, double limit) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "%s: %s spent of %s; another trial's next epoch (~%s each) would overshoot",
                  what.c_str(), Dollars(used).c_str(), Dollars(limit).c_str(),
                  Dollars(per_epoch).c_str());
    *why = buf;
    return false;
  };
  if (budget > 0 && spent + committed > budget) return overshoots("budget", spent, budget);
  for (const auto& q : quotas_) {
    if (q.spent + committed > q.limit) return overshoots("quota " + q.name, q.spent, q.limit);
  }
  return true;
}

std::optional<NextTrial> StudyRunner::PickNext(double now, double spent, std::string* why_none) {
  if (state_ != StudyState::kRunning) return std::nullopt;
  if (BudgetExhausted(now, spent, why_none)) return std::nullopt;
  if (config_.parallelism > 0 && CountInState(TrialState::kRunning) >= config_.parallelism) {
    return std::nullopt;
  }
  // Work that was interrupted (a lost lease) goes first: it is already paid for in part.
  if (!pending_.empty()) {
    const auto& t = view_.trials.at(*pending_.begin());
    return NextTrial{t.number, false, t.params, t.LastResource()};
  }
  if (auto promoted = scheduler_->NextPromotion(view_)) {
    const auto& t = view_.trials.at(*promoted);
    return NextTrial{t.number, false, t.params, t.LastResource()};
  }
  if (static_cast<int64_t>(view_.trials.size()) >= config_.budget.max_trials) {
    *why_none = "budget: all " + std::to_string(config_.budget.max_trials) + " trials created";
    return std::nullopt;
  }
  if (exhausted_ || !CanAffordNewTrial(spent, why_none)) return std::nullopt;
  auto suggestions = searcher_->Suggest(view_, 1);
  if (suggestions.empty()) {
    exhausted_ = true;
    *why_none = "search space exhausted";
    return std::nullopt;
  }
  return NextTrial{static_cast<int64_t>(view_.trials.size()), true, suggestions.front(), 0};
}

search::Decision StudyRunner::Decide(int64_t number, int64_t epoch, double value, double now,
                                     double spent) {
  auto& trial = view_.trials.at(number);
  // Decide on a view that includes the new value, then put the view back: the Coordinator
  // applies the report only once the Store holds it.
  auto previous = trial.values.find(epoch);
  std::optional<double> old;
  if (previous != trial.values.end()) old = previous->second;
  trial.values[epoch] = value;
  search::Decision d = scheduler_->OnReport(view_, trial);
  if (old) {
    trial.values[epoch] = *old;
  } else {
    trial.values.erase(epoch);
  }
  std::string why;
  if (state_ == StudyState::kCancelled) return search::Decision::Stop("study cancelled");
  if (d.action != search::Action::kStop && epoch < config_.budget.max_epochs &&
      BudgetExhausted(now, spent, &why)) {
    return search::Decision::Stop(why);
  }
  if (d.action == search::Action::kContinue && epoch >= config_.budget.max_epochs) {
    d.reason = "max epochs reached (" + std::to_string(config_.budget.max_epochs) + ")";
  }
  return d;
}

bool StudyRunner::Finished(double now, double spent, std::string* reason) {
  if (state_ != StudyState::kRunning) {
    *reason = end_reason_;
    return true;
  }
  if (CountInState(TrialState::kRunning) > 0) return false;
  const bool pending = !pending_.empty();
  // A spent budget (or quota) ends the study even with trials requeued (a preemption): PickNext
  // never leases them again, so waiting for them would keep the study open for ever.
  std::string why;
  if (BudgetExhausted(now, spent, &why)) {
    *reason = why;
    return true;
  }
  if (pending) return false;
  if (scheduler_->NextPromotion(view_)) return false;
  if (static_cast<int64_t>(view_.trials.size()) >= config_.budget.max_trials) {
    *reason = "all " + std::to_string(config_.budget.max_trials) + " trials finished";
    return true;
  }
  if (!CanAffordNewTrial(spent, reason)) return true;
  if (exhausted_) {
    *reason = "search space exhausted";
    return true;
  }
  return false;
}

void StudyRunner::ApplyNewTrial(int64_t number, const search::Params& params) {
  search::TrialView t;
  t.number = number;
  t.params = params;
  t.state = TrialState::kPending;
  view_.trials.push_back(std::move(t));
  ++in_state_[static_cast<size_t>(TrialState::kPending)];
  pending_.insert(number);
}

void StudyRunner::ApplyState(int64_t number, TrialState state) {
  search::TrialView& t = view_.trials.at(number);
  --in_state_[static_cast<size_t>(t.state)];
  ++in_state_[static_cast<size_t>(state)];
  if (t.state == TrialState::kPending) pending_.erase(t.number);
  if (state == TrialState::kPending) pending_.insert(t.number);
  t.state = state;
  if (search::IsTerminal(state)) t.values.shrink_to_fit();  // its curve is final
}

void StudyRunner::ApplyReport(int64_t number, int64_t epoch, double value) {
  view_.trials.at(number).values[epoch] = value;
}

void StudyRunner::ApplyCost(int64_t number, double dollars, double seconds) {
  auto& t = view_.trials.at(number);
  t.cost_dollars += dollars;
  t.train_seconds += seconds;
}

void StudyRunner::NoteResumed(double at) {
  if (paused_since_) paused_seconds_ += std::max(0.0, at - *paused_since_);
  paused_since_.reset();
}

void StudyRunner::ApplyStudyState(StudyState state, const std::string& reason) {
  state_ = state;
  end_reason_ = reason;
}

}  // namespace sift::coordinator

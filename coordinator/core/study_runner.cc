#include "coordinator/core/study_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "common/checkpoint_names.h"
#include "common/metric_names.h"
#include "search/enqueued_searcher.h"
#include "search/factory.h"
#include "search/pbt_scheduler.h"

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
  if (config_.objectives.size() > 1) view_.objectives = config_.objectives;
  view_.constraints = config_.constraints;
  for (const auto& o : view_.objectives) measures_cost_ |= common::OnlyGrows(o.metric);
  for (const auto& c : view_.constraints) measures_cost_ |= common::OnlyGrows(c.metric);
  view_.seed = config_.seed;
  view_.max_resource = config_.budget.max_epochs;
}

void StudyRunner::MakeAlgorithms() {
  std::vector<std::string> errors;
  const size_t objectives = std::max<size_t>(1, config_.objectives.size());
  searcher_ = search::MakeSearcher(config_.searcher.type, config_.searcher.options, config_.space,
                                   &errors, objectives);
  if (searcher_ && !priors_.points.empty()) searcher_->SetPriors(priors_);
  if (searcher_ && !config_.enqueue.empty()) {
    searcher_ = std::make_unique<search::EnqueuedSearcher>(config_.enqueue, std::move(searcher_));
  }
  search::SchedulerContext context{config_.budget.max_epochs, config_.objective.maximize,
                                   objectives};
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
    if (r.number < static_cast<int64_t>(view_.trials.size())) {
      ApplyReport(r.number, r.epoch, r.metrics);
      ApplyCheckpoint(r.number, r.checkpoint);
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
    return NextTrial{t.number, false, t.params, t.LastResource(), std::nullopt};
  }
  if (auto promoted = scheduler_->NextPromotion(view_)) {
    const auto& t = view_.trials.at(*promoted);
    NextTrial next{t.number, false, t.params, t.LastResource(), std::nullopt};
    next.exploit = scheduler_->ExploitOnResume(view_, t.number);
    if (next.exploit) next.params = next.exploit->params;
    return next;
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
  return NextTrial{static_cast<int64_t>(view_.trials.size()), true, suggestions.front(), 0,
                   std::nullopt};
}

template <typename Fn>
void StudyRunner::ForEachCurve(search::TrialView& trial,
                               const std::map<std::string, double>& metrics, Fn fn) const {
  // Objectives hold finite values only (a diverged trial's last report never enters the view);
  // a constraint's non-finite value is kept, as the violation it is.
  auto objective = [&](const std::string& metric, search::CurveValues& curve) {
    auto it = metrics.find(metric);
    if (it != metrics.end() && std::isfinite(it->second)) fn(curve, it->second);
  };
  objective(config_.objective.metric, trial.values);
  for (size_t i = 1; i < view_.objectives.size(); ++i) {
    objective(view_.objectives[i].metric, trial.more_values.at(i - 1));
  }
  for (size_t j = 0; j < view_.constraints.size(); ++j) {
    auto it = metrics.find(view_.constraints[j].metric);
    if (it != metrics.end()) fn(trial.constraint_values.at(j), it->second);
  }
}

search::Decision StudyRunner::Decide(int64_t number, int64_t epoch, double value, double now,
                                     double spent) {
  return Decide(number, epoch, {{config_.objective.metric, value}}, now, spent);
}

search::Decision StudyRunner::Decide(int64_t number, int64_t epoch,
                                     const std::map<std::string, double>& metrics, double now,
                                     double spent) {
  auto& trial = view_.trials.at(number);
  // Decide on a view that includes the new values, then put the view back: the Coordinator
  // applies the report only once the Store holds it.
  std::vector<std::pair<search::CurveValues*, std::optional<double>>> before;
  ForEachCurve(trial, metrics, [&](search::CurveValues& curve, double value) {
    auto previous = curve.find(epoch);
    before.emplace_back(
        &curve, previous != curve.end() ? std::optional<double>(previous->second) : std::nullopt);
    curve[epoch] = value;
  });
  search::Decision d = scheduler_->OnReport(view_, trial);
  for (auto it = before.rbegin(); it != before.rend(); ++it) {
    if (it->second) {
      (*it->first)[epoch] = *it->second;
    } else {
      it->first->erase(epoch);
    }
  }
  std::string why;
  if (state_ == StudyState::kCancelled) return search::Decision::Stop("study cancelled");
  // A broken bound on dollars or seconds is the reason, whatever the scheduler said: it is the
  // user's hard limit, and the trial can never come back within it.
  if (CrossedGrowingBound(metrics, &why)) return search::Decision::Stop(why);
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
  if (!view_.objectives.empty()) t.more_values.resize(view_.objectives.size() - 1);
  t.constraint_values.resize(view_.constraints.size());
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
  ApplyReport(number, epoch, {{config_.objective.metric, value}});
}

void StudyRunner::ApplyReport(int64_t number, int64_t epoch,
                              const std::map<std::string, double>& metrics) {
  ForEachCurve(view_.trials.at(number), metrics,
               [&](search::CurveValues& curve, double value) { curve[epoch] = value; });
}

bool StudyRunner::CrossedGrowingBound(const std::map<std::string, double>& metrics,
                                      std::string* why) const {
  for (const auto& c : view_.constraints) {
    if (!c.upper || !common::OnlyGrows(c.metric)) continue;
    auto it = metrics.find(c.metric);
    if (it == metrics.end() || c.Holds(it->second)) continue;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "constraint %s <= %g crossed (%g): it can only grow",
                  c.metric.c_str(), c.bound, it->second);
    *why = buf;
    return true;
  }
  return false;
}

void StudyRunner::AddMeasured(int64_t number, double open_dollars, double open_seconds,
                              std::map<std::string, double>* metrics) const {
  if (!measures_cost_) return;
  const auto& t = view_.trials.at(number);
  (*metrics)[common::kDollars] = t.cost_dollars + open_dollars;
  (*metrics)[common::kTrainSeconds] = t.train_seconds + open_seconds;
}

void StudyRunner::ApplyCost(int64_t number, double dollars, double seconds) {
  auto& t = view_.trials.at(number);
  t.cost_dollars += dollars;
  t.train_seconds += seconds;
}

void StudyRunner::ApplyCheckpoint(int64_t number, const std::string& name) {
  if (config_.scheduler.type != "pbt") return;  // only PBT copies; 10,000 trials' sets cost
  const auto p = common::ParseCheckpointName(name);
  if (p && p->step == 0 && p->trial == number) view_.trials.at(number).checkpoints.insert(p->epoch);
}

void StudyRunner::ApplyExploit(int64_t number, const search::Params& params) {
  view_.trials.at(number).params = params;
}

std::set<std::pair<int64_t, int64_t>> StudyRunner::CheckpointsToKeep() const {
  const auto* pbt = dynamic_cast<const search::PbtScheduler*>(scheduler_.get());
  return pbt != nullptr ? pbt->CheckpointsToKeep(view_) : std::set<std::pair<int64_t, int64_t>>{};
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

// A small deterministic simulation of the coordinator's loop for scheduler tests: a few workers,
// trials with noisy learning curves, promotions asked before new trials, decisions applied.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "search/rng.h"
#include "search/scheduler.h"

namespace sift::search::testing {

struct SimEvent {
  int64_t trial;
  int64_t resource;
  Decision decision;
};

struct SimResult {
  StudyView study;
  std::vector<SimEvent> events;
  std::vector<int64_t> promotions;
  std::vector<Exploit> exploits;  // population-based training's, applied at the promotion
};

// The coordinator's two ways to fill a free worker: run again the trial a scheduler promoted, or
// start a new one. Either is set running and joins `running`.
inline void RunAgain(StudyView& study, std::vector<int64_t>& running, int64_t trial) {
  study.trials[static_cast<size_t>(trial)].state = TrialState::kRunning;
  running.push_back(trial);
}
inline void StartNew(StudyView& study, std::vector<int64_t>& running) {
  TrialView t;
  t.number = static_cast<int64_t>(study.trials.size());
  t.state = TrialState::kRunning;
  study.trials.push_back(t);
  running.push_back(t.number);
}

// Curve of trial n at epoch e: quality q_n (seeded) times a saturating curve, plus noise.
inline double SimValue(uint64_t seed, int64_t trial, int64_t epoch) {
  Rng q(DeriveSeed(seed, {static_cast<uint64_t>(trial)}));
  const double quality = q.Uniform(0.5, 1.0);
  Rng noise(DeriveSeed(seed, {static_cast<uint64_t>(trial), static_cast<uint64_t>(epoch)}));
  return quality * (1.0 - std::exp(-static_cast<double>(epoch) / 3.0)) + 0.01 * noise.Normal();
}

// A second objective for multi-objective runs, to minimize: the trial's dollars so far, at a
// rate that grows with its quality (the better trials cost more, so there is a trade-off).
inline double SimCost(uint64_t seed, int64_t trial, int64_t epoch) {
  Rng q(DeriveSeed(seed, {static_cast<uint64_t>(trial)}));
  const double quality = q.Uniform(0.5, 1.0);
  Rng rate(DeriveSeed(seed, {static_cast<uint64_t>(trial), 0x434F5354}));
  return static_cast<double>(epoch) * (quality + 0.5 * rate.Uniform());
}
// A constrained metric of each trial (its model size, say), fixed per trial: above
// kSimSizeBound (about a fifth of the trials) it is infeasible.
constexpr double kSimSizeBound = 0.8;
inline double SimSize(uint64_t seed, int64_t trial) {
  Rng size(DeriveSeed(seed, {static_cast<uint64_t>(trial), 0x53495A45}));
  return size.Uniform();
}

// Runs `n_trials` trials with `workers` parallel slots. `check` (optional) is called with the
// view and trial at every report, before the decision is applied. With `objectives` 2 the study
// also minimizes SimCost (maximizes it, negated, when `maximize` is false) under the constraint
// SimSize <= kSimSizeBound.
inline SimResult Simulate(
    Scheduler& scheduler, int n_trials, int workers, int64_t max_resource, bool maximize,
    uint64_t seed = 7,
    const std::function<void(const StudyView&, const TrialView&, const Decision&)>& check = {},
    size_t objectives = 1) {
  SimResult r;
  r.study.objective.maximize = maximize;
  r.study.max_resource = max_resource;
  if (objectives > 1) {
    r.study.objectives = {{"val_accuracy", maximize}, {"dollars", !maximize}};
    r.study.constraints = {{"size", kSimSizeBound, true}};
  }
  std::vector<int64_t> running;
  for (int guard = 0; guard < 100000; ++guard) {
    while (static_cast<int>(running.size()) < workers) {
      if (auto p = scheduler.NextPromotion(r.study)) {
        if (auto e = scheduler.ExploitOnResume(r.study, *p)) {
          r.study.trials[*p].params = e->params;
          r.exploits.push_back(std::move(*e));
        }
        r.promotions.push_back(*p);
        RunAgain(r.study, running, *p);
      } else if (static_cast<int>(r.study.trials.size()) < n_trials) {
        StartNew(r.study, running);
      } else {
        break;
      }
    }
    if (running.empty()) break;
    std::vector<int64_t> still;
    for (int64_t n : running) {
      TrialView& t = r.study.trials[n];
      const int64_t e = t.LastResource() + 1;
      const double v = SimValue(seed, n, e);
      t.values[e] = maximize ? v : -v;
      if (objectives > 1) {
        const double c = SimCost(seed, n, e);
        t.more_values.resize(1);
        t.more_values[0][e] = maximize ? c : -c;
        t.constraint_values.resize(1);
        t.constraint_values[0][e] = SimSize(seed, n);
      }
      Decision d = scheduler.OnReport(r.study, t);
      if (check) check(r.study, t, d);
      r.events.push_back({n, e, d});
      if (d.action == Action::kStop) {
        t.state = TrialState::kStopped;
      } else if (d.action == Action::kPause) {
        t.state = TrialState::kPaused;
        t.checkpoints.insert(e);  // the coordinator keeps a paused trial's checkpoint
      } else if (e >= max_resource) {
        t.state = TrialState::kCompleted;
      } else {
        still.push_back(n);
      }
    }
    running = still;
  }
  return r;
}

// A coordinator's history under churn, for the promotion variants' tests: six slots, each free one
// filled by NextPromotion or else a new trial; then one running trial, picked at random, reports
// its next epoch through `report`, except that 1 in `fail_one_in` fails instead, and 1 in that
// first stops a paused trial from outside. Every 500 steps the scheduler is handed an empty view
// (its tables are cleared, and rebuilt from the whole history in one Sync, as on a restart).
// `asked(step, got)` and `decided(step, trial, decision)` check each answer; either returning
// false ends the run. Returns the number of promotions.
inline int Churn(Scheduler& s, StudyView& study, Rng& rng, int steps, size_t max_trials,
                 uint64_t fail_one_in, const std::function<void(TrialView&)>& report,
                 const std::function<bool(int, std::optional<int64_t>)>& asked,
                 const std::function<bool(int, const TrialView&, const Decision&)>& decided) {
  std::vector<int64_t> running;
  int promoted = 0;
  for (int step = 0; step < steps && study.trials.size() < max_trials; ++step) {
    if (step % 500 == 499) s.NextPromotion(StudyView{});
    if (running.size() < 6) {
      const std::optional<int64_t> got = s.NextPromotion(study);
      if (!asked(step, got)) break;
      if (got) {
        ++promoted;
        RunAgain(study, running, *got);
      } else {
        StartNew(study, running);
      }
      continue;
    }
    const size_t pick = rng.Below(running.size());
    TrialView& t = study.trials[static_cast<size_t>(running[pick])];
    const uint64_t event = rng.Below(fail_one_in);
    if (event == 0) {
      t.state = TrialState::kFailed;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
      continue;
    }
    if (event == 1) {
      for (TrialView& paused : study.trials) {
        if (paused.state != TrialState::kPaused) continue;
        paused.state = TrialState::kStopped;
        break;
      }
    }
    report(t);
    const Decision d = s.OnReport(study, t);
    if (!decided(step, t, d)) break;
    if (d.action == Action::kPause) t.state = TrialState::kPaused;
    if (d.action == Action::kStop) t.state = TrialState::kStopped;
    if (d.action == Action::kContinue && t.LastResource() >= study.max_resource) {
      t.state = TrialState::kCompleted;
    }
    if (t.state != TrialState::kRunning) {
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  return promoted;
}

}  // namespace sift::search::testing

// A history that changes the way a coordinator's does, for checking state kept across asks against
// a recomputation: trials start, report epochs, pause and resume, stop, complete, fail or diverge,
// out of order, with tied and non-finite values.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "search/rng.h"
#include "search/study_view.h"
#include "tests/search/searcher_sim.h"

namespace sift::search::testing {

class ChurningStudy {
 public:
  ChurningStudy(const SearchSpace& space, uint64_t seed, int64_t epochs) : rng_(seed * 7 + 1) {
    study_.space = &space;
    study_.seed = seed;
    study_.max_resource = epochs;
  }
  StudyView& study() { return study_; }

  // What a running trial reports at `epoch` (by default the searcher tests' objective, rounded so
  // that scores tie, now and then not a number), from `rng`: the multi-objective tests write
  // several curves.
  using Reporter = std::function<void(TrialView& trial, int64_t epoch, Rng& rng)>;
  void SetReporter(Reporter report) { report_ = std::move(report); }
  // Whether a trial may pause (and be promoted later); a paused trial's result leaves the history
  // until it reports again.
  void SetPauses(bool pauses) { pauses_ = pauses; }

  // Adds a trial with `params` (pending or running) and moves a few open trials on.
  void Step(const Params& params) {
    TrialView t;
    t.number = static_cast<int64_t>(study_.trials.size());
    t.params = params;
    t.state = rng_.Below(3) == 0 ? TrialState::kPending : TrialState::kRunning;
    study_.trials.push_back(std::move(t));
    for (int k = 0; k < 3; ++k) {
      // Mostly recent trials, sometimes an old one (a paused trial promoted long after).
      const size_t n = study_.trials.size();
      const size_t i =
          rng_.Below(2) == 0 ? n - 1 - rng_.Below(std::min<size_t>(n, 8)) : rng_.Below(n);
      Advance(study_.trials[i]);
    }
  }

 private:
  void Advance(TrialView& t) {
    switch (t.state) {
      case TrialState::kPending:
        t.state = TrialState::kRunning;
        return;
      case TrialState::kPaused:
        t.state = TrialState::kRunning;  // promoted
        return;
      case TrialState::kRunning:
        break;
      default:
        return;  // terminal: never changes again
    }
    const int64_t epoch = t.LastResource() + 1;
    const uint64_t r = rng_.Below(40);
    if (report_) {
      report_(t, epoch, rng_);
    } else {
      // Rounded so that scores tie; now and then a value that is not finite.
      double v = std::round((Objective(*study_.space, t.params) + 0.1 * epoch) * 20) / 20;
      if (r == 0) v = NAN;
      t.values[epoch] = v;
    }
    if (r == 1) {
      t.state = TrialState::kDiverged;
    } else if (r == 2) {
      t.state = TrialState::kFailed;
    } else if (epoch >= study_.max_resource || r < 10) {
      t.state = epoch >= study_.max_resource ? TrialState::kCompleted : TrialState::kStopped;
    } else if (r < 20 && pauses_) {
      t.state = TrialState::kPaused;
    }
  }

  StudyView study_;
  Rng rng_;
  Reporter report_;
  bool pauses_ = true;
};

}  // namespace sift::search::testing

#include "search/curve_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "search/number_text.h"
#include "search/rungs.h"

namespace sift::search {

CurveScheduler::CurveScheduler(CurveOptions options)
    : options_(options), ensemble_(options.level) {}

void CurveScheduler::Sync(const StudyView& study, const TrialView& trial) {
  // Another horizon or direction is another study: every table starts over.
  if (!grid_ || study.max_resource != horizon_ || study.objective.maximize != maximize_) {
    horizon_ = study.max_resource;
    maximize_ = study.objective.maximize;
    grid_ = std::make_unique<CurveGrid>(horizon_);
    cursor_ = ReportCursor();
    Reset();
  }
  cursor_.Sync(
      study, &trial, [&] { Reset(); },
      [&](const TrialView& t, int64_t resource, double value) {
        if (options_.bar == CurveBar::kReached && t.number >= 0 && std::isfinite(value)) {
          Reached(t.number, study.Score(value));
        }
        if (resource == horizon_) Finish(study, t, value);
      });
}

void CurveScheduler::Reset() {
  finals_.Clear();
  noise_.Clear();
  sums_.clear();
  reached_.clear();
  top_reached_.clear();
  reaching_ = 0;
}

void CurveScheduler::Finish(const StudyView& study, const TrialView& t, double value) {
  finals_.Add({RungRecord::Orderable(study.Score(value)), t.number},
              std::max<int64_t>(0, finals_.size() + 1 - options_.k));
  // Its whole curve, fitted once more for its noise (its sums are dropped after).
  const EnsembleForecast f = ensemble_.Forecast(*grid_, SumsOf(study, t));
  Forget(t.number);
  if (!f.ok || !std::isfinite(f.noise_var)) return;
  noise_.Add({f.noise_var, t.number}, noise_.size() / 2);  // the new lower median
}

NoisePrior CurveScheduler::Prior() const {
  if (noise_.size() == 0) return {};
  return {CurveOptions::kPriorDof, noise_.At((noise_.size() - 1) / 2).score};
}

CurveSums& CurveScheduler::SumsOf(const StudyView& study, const TrialView& trial) {
  if (sums_.size() >= sweep_at_) {
    // Trials that ended (or wait paused) without a last report here: drop their sums, which a
    // later report would rebuild the same. Amortised O(1) per report.
    for (auto it = sums_.begin(); it != sums_.end();) {
      const TrialState s = study.trials[static_cast<size_t>(it->first)].state;
      it = it->first != trial.number && (IsTerminal(s) || s == TrialState::kPaused)
               ? sums_.erase(it)
               : std::next(it);
    }
    sweep_at_ = std::max<size_t>(64, 2 * sums_.size());
  }
  CurveSums& sums = sums_[trial.number];
  for (auto it = trial.values.upper_bound(sums.last_epoch()); it != trial.values.end(); ++it) {
    sums.Add(*grid_, it->first, study.Score(it->second));
  }
  return sums;
}

void CurveScheduler::Forget(int64_t trial) { sums_.erase(trial); }

void CurveScheduler::Reached(int64_t trial, double score) {
  if (reached_.size() <= static_cast<size_t>(trial)) {
    reached_.resize(static_cast<size_t>(trial) + 1, std::numeric_limits<double>::quiet_NaN());
  }
  double& r = reached_[static_cast<size_t>(trial)];
  if (std::isnan(r)) {
    ++reaching_;
  } else if (score <= r) {
    return;
  }
  r = score;
  // A trial's best only grows, so every trial outside the k + 1 best stays below them until it
  // grows past the last: those k + 1 are all the bar (the k-th best of the others) ever needs.
  const Final e{score, trial};
  auto it = std::find_if(top_reached_.begin(), top_reached_.end(),
                         [&](const Final& f) { return f.trial == trial; });
  if (it == top_reached_.end()) {
    if (top_reached_.size() > static_cast<size_t>(options_.k)) {
      if (!WorseFirst()(top_reached_.back(), e)) return;
      top_reached_.pop_back();
    }
    it = top_reached_.insert(top_reached_.end(), e);
  } else {
    *it = e;
  }
  for (; it != top_reached_.begin() && WorseFirst()(*(it - 1), *it); --it) {
    std::iter_swap(it - 1, it);
  }
}

double CurveScheduler::KthReached(int64_t trial, int64_t* others) const {
  const bool own = trial >= 0 && static_cast<size_t>(trial) < reached_.size() &&
                   !std::isnan(reached_[static_cast<size_t>(trial)]);
  *others = reaching_ - (own ? 1 : 0);
  int64_t left = options_.k;
  for (const Final& f : top_reached_) {
    if (f.trial != trial && --left == 0) return f.score;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

Decision CurveScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  Sync(study, trial);
  last_ = EnsembleForecast();
  last_kth_ = std::numeric_limits<double>::quiet_NaN();
  const int64_t t = trial.LastResource();
  if (t >= horizon_) {  // it completes: nothing left to decide
    Forget(trial.number);
    return Decision::Continue();
  }
  last_ = ensemble_.Forecast(*grid_, SumsOf(study, trial), 0, Prior());
  if (!last_.ok) return Decision::Continue();
  const bool max = study.objective.maximize;
  const CurvePrediction v = CurveEnsemble::InValues(last_.prediction, max);
  char buf[64];
  std::string r = "curve: predicted final ";
  r.reserve(240);
  r.append(G6(v.mean)).append(" [").append(G6(v.lo)).append(", ").append(G6(v.hi)).append("] (");
  std::snprintf(buf, sizeof(buf), "%g", 100 * options_.level);
  r.append(buf).append("%) at epoch ").append(std::to_string(horizon_));
  r.append(" from ").append(std::to_string(last_.points)).append(" epochs");
  // The bar: the k-th best final value, or the k-th best value another trial has reached.
  std::string bar;
  if (options_.bar == CurveBar::kReached) {
    int64_t others = 0;
    last_kth_ = KthReached(trial.number, &others);
    if (std::isnan(last_kth_)) {
      r.append("; ").append(std::to_string(others)).append(" of the ");
      r.append(std::to_string(options_.k)).append(" other trials' values needed to compare");
      return Decision::Continue(std::move(r));
    }
    bar.append(" reached by ").append(std::to_string(others)).append(" other trials");
  } else {
    const int64_t finished = finals_.size();
    if (finished < options_.k) {
      r.append("; ").append(std::to_string(finished)).append(" of the ");
      r.append(std::to_string(options_.k)).append(" finished trials needed to compare");
      return Decision::Continue(std::move(r));
    }
    last_kth_ = finals_.At(finished - options_.k).score;
    bar.append(" of ").append(std::to_string(finished)).append(" finished");
  }
  const double p = CurveEnsemble::ProbabilityAbove(last_, last_kth_);
  const bool stop = t >= options_.min_epochs && p < options_.threshold;
  std::snprintf(buf, sizeof(buf), "%.3g", p);
  r.append("; P(final ").append(max ? "> " : "< ").append(G6(study.Score(last_kth_)));
  r.append(", best #").append(std::to_string(options_.k)).append(bar).append(") = ").append(buf);
  std::snprintf(buf, sizeof(buf), "%g", options_.threshold);
  r.append(p < options_.threshold ? " < " : " >= ").append(buf);
  if (!stop) {
    if (p < options_.threshold) r.append(" (before min_epochs)");
    return Decision::Continue(std::move(r));
  }
  Forget(trial.number);
  return Decision::Stop(std::move(r));
}

}  // namespace sift::search

// Stop by predicted final value (issue 27, section 1; after Domhan et al., IJCAI 2015): at each
// report, fit the trial's learning curve with the ensemble of search/curve/ and stop it when the
// probability that its value at max epochs beats the k-th best final value so far falls below a
// threshold, never before min_epochs. Every decision's reason carries the prediction, its
// interval and that probability.
//
// The k-th best is taken among observed final values only (the values of trials that reached
// max epochs), not among other running trials' predictions: it then follows from the history
// alone, so a restarted coordinator replays the same decisions from its Store; it costs
// O(log n) per report instead of a fit of every running trial; and a trial is never stopped on
// the strength of another trial's extrapolation. The price: nothing stops before k trials have
// finished, so the first trials (one per worker) always run to max epochs. `bar: reached`
// compares with the k-th best value any other trial has reached so far instead: still a function
// of the history, and a value some trial already has, so it starts comparing as soon as k other
// trials have reported; cheaper, at the price of more good trials stopped (bench/search).
//
// The noise of a curve cannot be told from its first few points, so the fits take a prior on it
// from the trials that finished (the prior shared across trials): the median of their
// fitted residual variances, worth kPriorDof points. The median, exactly, so that it does not
// depend on the order in which trials finished.
//
// Fits are cached per running trial as running sums keyed by the epochs already folded in (see
// curve_models.h), so a report costs one new point and one fit, and a fresh scheduler rebuilds
// the same sums bit for bit from the history.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "search/curve/curve_ensemble.h"
#include "search/rank_window.h"
#include "search/report_cursor.h"
#include "search/scheduler.h"

namespace sift::search {

// What a forecast is compared with.
enum class CurveBar {
  kFinished,  // the k-th best value at max epochs of the trials that finished
  kReached,   // the k-th best value any other trial has reached so far, at any epoch
};

struct CurveOptions {
  // Pseudo-points the finished trials' noise counts for in each fit (0: no prior).
  static constexpr int64_t kPriorDof = 4;

  int64_t min_epochs = 3;   // never stop before this epoch
  double threshold = 0.05;  // stop when P(final better than the k-th best) is below this
  int64_t k = 1;            // which best final value a trial must beat
  double level = 0.9;       // coverage of the interval written into the reason
  CurveBar bar = CurveBar::kFinished;
};

class CurveScheduler : public Scheduler {
 public:
  explicit CurveScheduler(CurveOptions options);
  Decision OnReport(const StudyView& study, const TrialView& trial) override;

  // The forecast behind the last decision (not ok when there was none), and the k-th best final
  // score it was compared with (NaN when fewer than k trials had finished).
  const EnsembleForecast& last_forecast() const { return last_; }
  double last_threshold_score() const { return last_kth_; }

 private:
  struct Final {
    double score;
    int64_t trial;
  };
  struct WorseFirst {
    bool operator()(const Final& a, const Final& b) const {
      return a.score < b.score || (a.score == b.score && a.trial > b.trial);
    }
  };
  void Finish(const StudyView& study, const TrialView& t, double value);
  NoisePrior Prior() const;
  void Sync(const StudyView& study, const TrialView& trial);
  void Reset();  // every table built from the history, emptied
  CurveSums& SumsOf(const StudyView& study, const TrialView& trial);
  void Forget(int64_t trial);
  void Reached(int64_t trial, double score);
  // The k-th best reached score of trials other than `trial` (NaN when fewer than k), and how
  // many other trials have reached a score.
  double KthReached(int64_t trial, int64_t* others) const;

  CurveOptions options_;
  CurveEnsemble ensemble_;
  int64_t horizon_ = 0;
  bool maximize_ = true;
  std::unique_ptr<CurveGrid> grid_;
  ReportCursor cursor_;
  RankWindow<Final, WorseFirst> finals_;         // scores at max epochs, focused on the k-th best
  RankWindow<Final, WorseFirst> noise_;          // finished trials' noise variances, at the median
  std::unordered_map<int64_t, CurveSums> sums_;  // by trial number, while it may report
  std::vector<double> reached_;                  // bar reached: each trial's best score (NaN: none)
  std::vector<Final> top_reached_;               // the k + 1 best of them, best first
  int64_t reaching_ = 0;                         // trials with a score
  size_t sweep_at_ = 64;  // sums_ size at which ended trials' sums are dropped
  EnsembleForecast last_;
  double last_kth_ = 0;
};

}  // namespace sift::search

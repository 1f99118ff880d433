#include "search/median_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "search/number_text.h"

namespace sift::search {
namespace {

double RunningAverage(const StudyView& study, const TrialView& t, int64_t upto) {
  double sum = 0;
  int64_t n = 0;
  for (auto it = t.values.begin(); it != t.values.end() && it->first <= upto; ++it, ++n) {
    sum += study.Score(it->second);
  }
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

// The i-th element of `v` once the element at `skip` is removed.
template <class Get>
double NthExcluding(int64_t size, int64_t skip, int64_t i, Get get) {
  return get((skip >= 0 && i >= skip) ? i + 1 : i);
}

template <class Get>
double Median(int64_t size, int64_t skip, Get get) {
  const int64_t n = skip >= 0 ? size - 1 : size;
  const double hi = NthExcluding(size, skip, n / 2, get);
  if (n % 2 == 1) return hi;
  return 0.5 * (hi + NthExcluding(size, skip, n / 2 - 1, get));
}

}  // namespace

double MedianExcluding(const std::vector<double>& sorted, int64_t skip) {
  return Median(static_cast<int64_t>(sorted.size()), skip,
                [&](int64_t i) { return sorted[static_cast<size_t>(i)]; });
}

double MedianSplit::Orderable(double average) {
  return std::isnan(average) ? -std::numeric_limits<double>::infinity() : average;
}

void MedianSplit::Add(int64_t trial, double average) {
  average = Orderable(average);
  const auto t = static_cast<size_t>(trial);
  if (t >= recorded_.size()) {
    recorded_.resize(std::max(t + 1, 2 * recorded_.size()),
                     std::numeric_limits<double>::quiet_NaN());
  }
  if (!std::isnan(recorded_[t])) return;
  recorded_[t] = average;
  averages_.Add({average, trial}, (averages_.size() + 1) / 2);
}

bool MedianSplit::Has(int64_t trial, double average) const {
  const auto t = static_cast<size_t>(trial);
  return t < recorded_.size() && recorded_[t] == Orderable(average);
}

double MedianSplit::MedianWithout(const Entry& self, bool self_recorded) const {
  const int64_t m = self_recorded ? size() - 1 : size();
  // The i-th smallest of the others: past self, the next recorded one.
  const auto nth = [&](int64_t i) {
    const Entry& e = averages_.At(i);
    return self_recorded && !(e < self) ? averages_.At(i + 1).average : e.average;
  };
  const double hi = nth(m / 2);
  if (m % 2 == 1) return hi;
  return 0.5 * (hi + nth(m / 2 - 1));
}

Decision MedianScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  cursor_.Sync(
      study, &trial, [&] { averages_.clear(); },
      [&](const TrialView& t, int64_t resource, double) {
        averages_[resource].Add(t.number, RunningAverage(study, t, resource));
      });
  const int64_t t = trial.LastResource();
  if (t < options_.min_resource || t >= study.max_resource) return Decision::Continue();
  const MedianSplit& v = averages_[t];
  const double average = RunningAverage(study, trial, t);
  const bool recorded = v.Has(trial.number, average);
  const int64_t others = v.size() - (recorded ? 1 : 0);
  if (others < options_.min_trials || others <= 0) return Decision::Continue();
  const double median = v.MedianWithout({MedianSplit::Orderable(average), trial.number}, recorded);
  double mine = average;
  if (!options_.running_average) {
    mine = study.Score(trial.values.begin()->second);
    for (const auto& [r, value] : trial.values) {
      if (r <= t) mine = std::max(mine, study.Score(value));
    }
  }
  if (mine >= median - options_.grace) return Decision::Continue();
  const std::string reason =
      std::string("median rule: ") + (options_.running_average ? "running average" : "best value") +
      " " + G6(study.Score(mine)) + " at epoch " + std::to_string(t) +
      " is worse than the median running average " + G6(study.Score(median)) + " of " +
      std::to_string(others) + " other trials";
  return Decision::Stop(reason);
}

}  // namespace sift::search

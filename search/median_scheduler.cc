#include "search/median_scheduler.h"

#include <algorithm>
#include <cstdio>

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

Decision MedianScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  cursor_.Sync(
      study, &trial, [&] { averages_.clear(); },
      [&](const TrialView& t, int64_t resource, double) {
        auto& v = averages_[resource];
        const Entry e{RunningAverage(study, t, resource), t.number};
        v.insert(std::upper_bound(v.begin(), v.end(), e), e);
      });
  const int64_t t = trial.LastResource();
  if (t < options_.min_resource || t >= study.max_resource) return Decision::Continue();
  const auto& v = averages_[t];
  const Entry self{RunningAverage(study, trial, t), trial.number};
  auto it = std::lower_bound(v.begin(), v.end(), self);
  const int64_t skip = (it != v.end() && it->trial == trial.number) ? it - v.begin() : -1;
  const int64_t others = static_cast<int64_t>(v.size()) - (skip >= 0 ? 1 : 0);
  if (others < options_.min_trials || others <= 0) return Decision::Continue();
  const double median = Median(static_cast<int64_t>(v.size()), skip,
                               [&](int64_t i) { return v[static_cast<size_t>(i)].average; });
  double mine = self.average;
  if (!options_.running_average) {
    mine = study.Score(trial.values.begin()->second);
    for (const auto& [r, value] : trial.values) {
      if (r <= t) mine = std::max(mine, study.Score(value));
    }
  }
  if (mine >= median - options_.grace) return Decision::Continue();
  char reason[200];
  std::snprintf(reason, sizeof(reason),
                "median rule: %s %.6g at epoch %lld is worse than the median running average "
                "%.6g of %lld other trials",
                options_.running_average ? "running average" : "best value", study.Score(mine),
                static_cast<long long>(t), study.Score(median), static_cast<long long>(others));
  return Decision::Stop(reason);
}

}  // namespace sift::search

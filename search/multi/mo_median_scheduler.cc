#include "search/multi/mo_median_scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "search/multi/mo_median.h"
#include "search/multi/objective_vectors.h"
#include "search/number_text.h"

namespace sift::search {
namespace {

// Each objective's oriented values up to `upto`, folded by running average or by best.
std::vector<double> Summary(const StudyView& study, const TrialView& t, int64_t upto,
                            bool average) {
  std::vector<double> out(ObjectiveCount(study), -INFINITY);
  for (size_t i = 0; i < out.size(); ++i) {
    const CurveValues* curve = ObjectiveCurve(t, i);
    if (curve == nullptr) continue;
    const double sign = ObjectiveAt(study, i).maximize ? 1.0 : -1.0;
    double sum = 0, best = -INFINITY;
    int64_t n = 0;
    for (auto it = curve->begin(); it != curve->end() && it->first <= upto; ++it, ++n) {
      const double v = std::isnan(it->second) ? -INFINITY : sign * it->second;
      sum += v;
      best = std::max(best, v);
    }
    if (n > 0) out[i] = average ? sum / static_cast<double>(n) : best;
  }
  return out;
}

// The values as the user reported them, "(0.91, 12.5)".
std::string Raw(const StudyView& study, const std::vector<double>& oriented) {
  std::string s = "(";
  for (size_t i = 0; i < oriented.size(); ++i) {
    s += (i ? ", " : "") + G6(ObjectiveAt(study, i).maximize ? oriented[i] : -oriented[i]);
  }
  return s + ")";
}

}  // namespace

void MoMedianScheduler::Epoch::Add(Entry e) {
  index.emplace(e.trial, entries.size());
  if (columns.empty()) columns.resize(e.averages.size());
  auto insert = [&](std::vector<double>& sorted, double v) {
    unordered = unordered || std::isnan(v);
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), v), v);
  };
  insert(violations, e.violation);
  for (size_t m = 0; m < columns.size() && m < e.averages.size(); ++m) {
    insert(columns[m], e.averages[m]);
  }
  entries.push_back(std::move(e));
}

void MoMedianScheduler::Medians(const Epoch& at, int64_t trial, double* violation,
                                std::vector<double>* point) const {
  const auto self = at.index.find(trial);
  if (at.unordered) {
    Points others;
    std::vector<double> violations;
    for (const Entry& e : at.entries) {
      if (e.trial == trial) continue;
      others.push_back(e.averages);
      violations.push_back(e.violation);
    }
    std::sort(violations.begin(), violations.end());
    *violation = MedianExcluding(violations, -1);
    *point = MedianPoint(others);
    return;
  }
  // Leaving out one copy of self's value leaves the same sorted values as leaving out self.
  auto skip = [&](const std::vector<double>& sorted, double v) -> int64_t {
    if (self == at.index.end()) return -1;
    return std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
  };
  const Entry* me = self == at.index.end() ? nullptr : &at.entries[self->second];
  *violation = MedianExcluding(at.violations, skip(at.violations, me ? me->violation : 0));
  point->resize(at.columns.size());
  for (size_t m = 0; m < at.columns.size(); ++m) {
    (*point)[m] = MedianExcluding(at.columns[m], skip(at.columns[m], me ? me->averages[m] : 0));
  }
}

Decision MoMedianScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  cursor_.Sync(
      study, &trial, [&] { at_.clear(); },
      [&](const TrialView& t, int64_t resource, double) {
        at_[resource].Add(
            {t.number, Summary(study, t, resource, true), ViolationAt(study, t, resource)});
      });
  const int64_t t = trial.LastResource();
  if (t < options_.min_resource || t >= study.max_resource) return Decision::Continue();
  const Epoch& at = at_[t];
  const auto n = static_cast<int64_t>(at.entries.size() - at.index.count(trial.number));
  if (n < options_.min_trials || n <= 0) return Decision::Continue();
  double median_violation;
  std::vector<double> median;
  Medians(at, trial.number, &median_violation, &median);
  const double violation = ViolationAt(study, trial, t);
  const std::string of = " of " + std::to_string(n) + " other trials";
  if (violation > median_violation) {
    return Decision::Stop("mo-median rule: constraint violation " + G6(violation) + " at epoch " +
                          std::to_string(t) + " is above the median violation " +
                          G6(median_violation) + of);
  }
  if (violation < median_violation) return Decision::Continue();
  const std::vector<double> mine = Summary(study, trial, t, options_.running_average);
  // DominatedByMedian (mo_median.h) on the medians already read.
  std::vector<double> bar = median;
  for (double& x : bar) x -= options_.grace;
  if (!Dominates(bar, mine)) return Decision::Continue();
  return Decision::Stop(std::string("mo-median rule: ") +
                        (options_.running_average ? "running averages " : "best values ") +
                        Raw(study, mine) + " at epoch " + std::to_string(t) +
                        " are dominated by the median running averages " + Raw(study, median) + of);
}

}  // namespace sift::search

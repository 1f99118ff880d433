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

Decision MoMedianScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  cursor_.Sync(
      study, &trial, [&] { at_.clear(); },
      [&](const TrialView& t, int64_t resource, double) {
        at_[resource].push_back(
            {t.number, Summary(study, t, resource, true), ViolationAt(study, t, resource)});
      });
  const int64_t t = trial.LastResource();
  if (t < options_.min_resource || t >= study.max_resource) return Decision::Continue();
  Points others;
  std::vector<double> violations;
  for (const Entry& e : at_[t]) {
    if (e.trial == trial.number) continue;
    others.push_back(e.averages);
    violations.push_back(e.violation);
  }
  const auto n = static_cast<int64_t>(others.size());
  if (n < options_.min_trials || n <= 0) return Decision::Continue();
  std::sort(violations.begin(), violations.end());
  const double median_violation = MedianExcluding(violations, -1);
  const double violation = ViolationAt(study, trial, t);
  const std::string of = " of " + std::to_string(n) + " other trials";
  if (violation > median_violation) {
    return Decision::Stop("mo-median rule: constraint violation " + G6(violation) + " at epoch " +
                          std::to_string(t) + " is above the median violation " +
                          G6(median_violation) + of);
  }
  if (violation < median_violation) return Decision::Continue();
  const std::vector<double> mine = Summary(study, trial, t, options_.running_average);
  if (!DominatedByMedian(mine, others, options_.grace)) return Decision::Continue();
  return Decision::Stop(std::string("mo-median rule: ") +
                        (options_.running_average ? "running averages " : "best values ") +
                        Raw(study, mine) + " at epoch " + std::to_string(t) +
                        " are dominated by the median running averages " +
                        Raw(study, MedianPoint(others)) + of);
}

}  // namespace sift::search

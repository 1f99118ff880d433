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

// Appends the values as the user reported them, "(0.91, 12.5)".
void AppendRaw(std::string& s, const StudyView& study, const std::vector<double>& oriented) {
  s += '(';
  for (size_t i = 0; i < oriented.size(); ++i) {
    if (i > 0) s += ", ";
    s += G6(ObjectiveAt(study, i).maximize ? oriented[i] : -oriented[i]);
  }
  s += ')';
}

}  // namespace

void MoMedianScheduler::Epoch::Add(Entry e) {
  index.emplace(e.trial, entries.size());
  if (columns.empty()) columns.resize(e.averages.size());
  unordered = unordered || std::isnan(e.violation);
  violations.Add(e.trial, e.violation);
  for (size_t m = 0; m < columns.size() && m < e.averages.size(); ++m) {
    unordered = unordered || std::isnan(e.averages[m]);
    columns[m].Add(e.trial, e.averages[m]);
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
  // The median of the others' values: what MedianExcluding gives on the sorted column less
  // self's value (MedianSplit::MedianWithout).
  const Entry* me = self == at.index.end() ? nullptr : &at.entries[self->second];
  auto without = [&](const MedianSplit& column, double mine) {
    return column.MedianWithout({MedianSplit::Orderable(mine), trial}, me != nullptr);
  };
  *violation = without(at.violations, me ? me->violation : 0);
  point->resize(at.columns.size());
  for (size_t m = 0; m < at.columns.size(); ++m) {
    (*point)[m] = without(at.columns[m], me ? me->averages[m] : 0);
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
  std::vector<double> mine;
  const bool infeasible = violation > median_violation;
  if (!infeasible) {
    if (violation < median_violation) return Decision::Continue();
    mine = Summary(study, trial, t, options_.running_average);
    // DominatedByMedian (mo_median.h) on the medians already read.
    std::vector<double> bar = median;
    for (double& x : bar) x -= options_.grace;
    if (!Dominates(bar, mine)) return Decision::Continue();
  }
  // Appended into one buffer (number_text.h): the text is much of a stop's cost.
  std::string r = "mo-median rule: ";
  r.reserve(160);
  const auto add = [&r](const auto&... parts) { (r.append(parts), ...); };
  const std::string of = std::to_string(n), epoch = std::to_string(t);
  if (infeasible) {
    add("constraint violation ", G6(violation), " at epoch ", epoch,
        " is above the median violation ", G6(median_violation), " of ", of, " other trials");
    return Decision::Stop(std::move(r));
  }
  add(options_.running_average ? "running averages " : "best values ");
  AppendRaw(r, study, mine);
  add(" at epoch ", epoch, " are dominated by the median running averages ");
  AppendRaw(r, study, median);
  add(" of ", of, " other trials");
  return Decision::Stop(std::move(r));
}

}  // namespace sift::search

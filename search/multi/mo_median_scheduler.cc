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
  if (e.trial >= 0 && Find(e.trial) == nullptr) {
    const auto t = static_cast<size_t>(e.trial);
    if (t >= index.size()) index.resize(std::max(t + 1, 2 * index.size()), -1);
    index[t] = static_cast<int64_t>(entries.size());
  }
  if (columns.empty()) columns.resize(e.averages.size());
  unordered = unordered || std::isnan(e.violation);
  // While every violation is 0 (a study without constraints, or none broken yet) their median is
  // 0 and the column is left empty; the first other value fills it with the zeros before it.
  if (violated || e.violation != 0) {
    if (!violated) {
      for (const Entry& x : entries) violations.Add(x.trial, x.violation);
      violated = true;
    }
    violations.Add(e.trial, e.violation);
  }
  for (size_t m = 0; m < columns.size() && m < e.averages.size(); ++m) {
    unordered = unordered || std::isnan(e.averages[m]);
    columns[m].Add(e.trial, e.averages[m]);
  }
  entries.push_back(std::move(e));
}

const MoMedianScheduler::Entry* MoMedianScheduler::Epoch::Find(int64_t trial) const {
  if (trial < 0) {  // not a study's trial number, but answered all the same
    for (const Entry& e : entries) {
      if (e.trial == trial) return &e;
    }
    return nullptr;
  }
  const auto t = static_cast<size_t>(trial);
  return t < index.size() && index[t] >= 0 ? &entries[static_cast<size_t>(index[t])] : nullptr;
}

void MoMedianScheduler::Medians(const Epoch& at, int64_t trial, double* violation,
                                std::vector<double>* point) const {
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
  const Entry* me = at.Find(trial);
  auto without = [&](const MedianSplit& column, double mine) {
    return column.MedianWithout({MedianSplit::Orderable(mine), trial}, me != nullptr);
  };
  *violation = at.violated ? without(at.violations, me ? me->violation : 0) : 0;
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
  const Entry* me = at.Find(trial.number);
  const auto n = static_cast<int64_t>(at.entries.size() - (me != nullptr ? 1 : 0));
  if (n < options_.min_trials || n <= 0) return Decision::Continue();
  double median_violation;
  std::vector<double>& median = median_;
  Medians(at, trial.number, &median_violation, &median);
  // The trial's own entry at t holds what would be read again: its violation there and its
  // running averages (most decisions continue, and these reads were most of one).
  const double violation = me ? me->violation : ViolationAt(study, trial, t);
  std::vector<double> mine;
  const bool infeasible = violation > median_violation;
  if (!infeasible) {
    if (violation < median_violation) return Decision::Continue();
    mine = me && options_.running_average ? me->averages
                                          : Summary(study, trial, t, options_.running_average);
    // DominatedByMedian (mo_median.h) on the medians already read: Dominates(median - grace,
    // mine) without the copy.
    bool better = false;
    for (size_t m = 0; m < median.size(); ++m) {
      const double bar = median[m] - options_.grace;
      if (bar < mine[m]) return Decision::Continue();
      better = better || bar > mine[m];
    }
    if (!better) return Decision::Continue();
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

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
void Summary(const StudyView& study, const TrialView& t, int64_t upto, bool average,
             std::vector<double>& out) {
  out.assign(ObjectiveCount(study), -INFINITY);
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
}

// Appends the values as the user reported them, "(0.91, 12.5)".
void AppendRaw(std::string& s, const StudyView& study, const double* oriented, size_t n) {
  s += '(';
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += ", ";
    s += G6(ObjectiveAt(study, i).maximize ? oriented[i] : -oriented[i]);
  }
  s += ')';
}

}  // namespace

void MoMedianScheduler::Epoch::Add(int64_t trial, const std::vector<double>& averages,
                                   double violation) {
  if (trial >= 0 && Find(trial) < 0) {
    const auto t = static_cast<size_t>(trial);
    if (t >= index.size()) index.resize(std::max(t + 1, 2 * index.size()), -1);
    index[t] = static_cast<int64_t>(entries.size());
  }
  if (entries.empty()) {
    dims = averages.size();
    columns.resize(dims);
  }
  unordered = unordered || std::isnan(violation);
  // While every violation is 0 (a study without constraints, or none broken yet) their median is
  // 0 and the column is left empty; the first other value fills it with the zeros before it.
  if (violated || violation != 0) {
    if (!violated) {
      for (const Entry& x : entries) violations.Add(x.trial, x.violation);
      violated = true;
    }
    violations.Add(trial, violation);
  }
  for (size_t m = 0; m < dims; ++m) {
    const double v = m < averages.size() ? averages[m] : -INFINITY;
    unordered = unordered || std::isnan(v);
    columns[m].Add(trial, v);
    values.push_back(v);
  }
  entries.push_back({trial, violation});
}

int64_t MoMedianScheduler::Epoch::Find(int64_t trial) const {
  if (trial < 0) {  // not a study's trial number, but answered all the same
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].trial == trial) return static_cast<int64_t>(i);
    }
    return -1;
  }
  const auto t = static_cast<size_t>(trial);
  return t < index.size() ? index[t] : -1;
}

void MoMedianScheduler::Medians(const Epoch& at, int64_t trial, double* violation,
                                std::vector<double>* point) const {
  if (at.unordered) {
    Points others;
    std::vector<double> violations;
    for (size_t i = 0; i < at.entries.size(); ++i) {
      const Entry& e = at.entries[i];
      if (e.trial == trial) continue;
      others.emplace_back(at.Averages(i), at.Averages(i) + at.dims);
      violations.push_back(e.violation);
    }
    std::sort(violations.begin(), violations.end());
    *violation = MedianExcluding(violations, -1);
    *point = MedianPoint(others);
    return;
  }
  // The median of the others' values: what MedianExcluding gives on the sorted column less
  // self's value (MedianSplit::MedianWithout).
  const int64_t me = at.Find(trial);
  const Entry* mine = me >= 0 ? &at.entries[static_cast<size_t>(me)] : nullptr;
  const double* averages = me >= 0 ? at.Averages(static_cast<size_t>(me)) : nullptr;
  auto without = [&](const MedianSplit& column, double value) {
    return column.MedianWithout({MedianSplit::Orderable(value), trial}, mine != nullptr);
  };
  *violation = at.violated ? without(at.violations, mine ? mine->violation : 0) : 0;
  point->resize(at.columns.size());
  for (size_t m = 0; m < at.columns.size(); ++m) {
    (*point)[m] = without(at.columns[m], averages ? averages[m] : 0);
  }
}

Decision MoMedianScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  cursor_.Sync(
      study, &trial, [&] { at_.clear(); },
      [&](const TrialView& t, int64_t resource, double) {
        Summary(study, t, resource, true, summary_);
        at_[resource].Add(t.number, summary_, ViolationAt(study, t, resource));
      });
  const int64_t t = trial.LastResource();
  if (t < options_.min_resource || t >= study.max_resource) return Decision::Continue();
  const Epoch& at = at_[t];
  const int64_t mine_at = at.Find(trial.number);
  const Entry* me = mine_at >= 0 ? &at.entries[static_cast<size_t>(mine_at)] : nullptr;
  const auto n = static_cast<int64_t>(at.entries.size() - (me != nullptr ? 1 : 0));
  if (n < options_.min_trials || n <= 0) return Decision::Continue();
  double median_violation;
  std::vector<double>& median = median_;
  Medians(at, trial.number, &median_violation, &median);
  // The trial's own entry at t holds what would be read again: its violation there and its
  // running averages (most decisions continue, and these reads were most of one).
  const double violation = me ? me->violation : ViolationAt(study, trial, t);
  const double* mine = nullptr;
  const bool infeasible = violation > median_violation;
  if (!infeasible) {
    if (violation < median_violation) return Decision::Continue();
    if (me && options_.running_average && at.dims == median.size()) {
      mine = at.Averages(static_cast<size_t>(mine_at));
    } else {
      Summary(study, trial, t, options_.running_average, summary_);
      mine = summary_.data();
    }
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
  AppendRaw(r, study, mine, median.size());
  add(" at epoch ", epoch, " are dominated by the median running averages ");
  AppendRaw(r, study, median.data(), median.size());
  add(" of ", of, " other trials");
  return Decision::Stop(std::move(r));
}

}  // namespace sift::search

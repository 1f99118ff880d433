#include "coordinator/report/html/chart_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace sift::coordinator {
namespace {

bool Better(const StudyReport& r, double a, double b) { return r.study.maximize ? a > b : a < b; }

// Epsilon-squared of `ys` grouped by `group` (one id per y).
double EpsilonSquared(const std::vector<double>& ys, const std::vector<int>& group, int groups) {
  const double n = static_cast<double>(ys.size());
  double mean = 0;
  for (double y : ys) mean += y;
  mean /= n;
  std::vector<double> sum(groups, 0), count(groups, 0);
  for (size_t i = 0; i < ys.size(); ++i) sum[group[i]] += ys[i], count[group[i]] += 1;
  double total = 0, between = 0;
  for (double y : ys) total += (y - mean) * (y - mean);
  int used = 0;
  for (int g = 0; g < groups; ++g) {
    if (count[g] == 0) continue;
    ++used;
    const double m = sum[g] / count[g];
    between += count[g] * (m - mean) * (m - mean);
  }
  if (total <= 0 || used < 2 || n <= used) return 0;
  const double within_mean_square = (total - between) / (n - used);
  return std::clamp((between - (used - 1) * within_mean_square) / total, 0.0, 1.0);
}

}  // namespace

namespace {

// The objective at `epoch` (0: the last value), when the trial has a finite one there.
std::optional<double> ValueAt(const StudyReport& report, const TrialSummary& t, int64_t epoch) {
  if (!Ranked(t)) return std::nullopt;
  if (epoch == 0) return t.objective;
  for (const auto& r : t.reports) {
    if (r.epoch != epoch) continue;
    auto it = r.metrics.find(report.study.metric);
    if (it != r.metrics.end() && std::isfinite(it->second)) return it->second;
  }
  return std::nullopt;
}

}  // namespace

int64_t ImportanceEpoch(const StudyReport& report) {
  std::map<int64_t, int> reached;  // epoch -> trials with a finite objective there
  int scored = 0;
  for (const auto& t : report.trials) {
    if (!Ranked(t)) continue;
    ++scored;
    for (const auto& r : t.reports) {
      auto it = r.metrics.find(report.study.metric);
      if (it != r.metrics.end() && std::isfinite(it->second)) ++reached[r.epoch];
    }
  }
  const int enough = std::min(scored, std::max(8, scored / 4));
  int64_t best = 0;
  for (const auto& [epoch, count] : reached) {
    if (count >= enough) best = epoch;
  }
  return best;
}

std::vector<Importance> ParamImportance(const StudyReport& report, int64_t epoch, int max_bins) {
  std::set<std::string> names;
  for (const auto& t : report.trials) {
    for (const auto& [k, v] : t.record.params) names.insert(k);
  }
  std::vector<Importance> out;
  for (const auto& name : names) {
    std::vector<std::pair<search::ParamValue, double>> xs;  // (value, objective)
    for (const auto& t : report.trials) {
      auto it = t.record.params.find(name);
      if (it == t.record.params.end()) continue;
      if (auto value = ValueAt(report, t, epoch)) xs.emplace_back(it->second, *value);
    }
    Importance imp{name, 0, 0, static_cast<int>(xs.size())};
    if (xs.size() >= 4) {
      std::vector<double> ys;
      std::vector<int> group;
      const bool numeric = !std::holds_alternative<std::string>(xs.front().first);
      auto number = [](const search::ParamValue& v) {
        return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v))
                                                  : std::get<double>(v);
      };
      std::map<std::string, int> distinct;
      for (const auto& [v, y] : xs) distinct.emplace(search::ToString(v), 0);
      const int bins_allowed =
          std::clamp(static_cast<int>(xs.size() / 5), 2, std::max(2, max_bins));
      if (!numeric || static_cast<int>(distinct.size()) <= bins_allowed) {
        int id = 0;
        for (auto& [k, g] : distinct) g = id++;
        for (const auto& [v, y] : xs)
          ys.push_back(y), group.push_back(distinct[search::ToString(v)]);
        imp.bins = id;
      } else {
        // Quantile bins by rank; equal values share a bin so a tie never splits.
        std::sort(xs.begin(), xs.end(),
                  [&](const auto& a, const auto& b) { return number(a.first) < number(b.first); });
        int bin = 0;
        for (size_t i = 0; i < xs.size(); ++i) {
          const int want = static_cast<int>(i * bins_allowed / xs.size());
          if (want > bin && number(xs[i].first) != number(xs[i - 1].first)) bin = want;
          ys.push_back(xs[i].second);
          group.push_back(bin);
        }
        imp.bins = bin + 1;
      }
      imp.share = EpsilonSquared(ys, group, imp.bins);
    }
    out.push_back(imp);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.share > b.share; });
  return out;
}

std::vector<SpendPoint> SpendOverTime(const std::vector<SegmentRecord>& segments, double now,
                                      int samples) {
  if (segments.empty() || samples < 2) return {};
  double first = segments.front().start, last = first;
  for (const auto& s : segments) {
    first = std::min(first, s.start);
    last = std::max(last, s.end ? *s.end : now);
  }
  std::vector<SpendPoint> out;
  for (int i = 0; i < samples; ++i) {
    const double at = first + (last - first) * i / (samples - 1);
    out.push_back({at, SpentAt(segments, at)});
  }
  return out;
}

std::vector<LevelCost> DollarsToLevels(const StudyReport& report, int levels) {
  const auto curve = BestSoFarCurve(report);
  if (curve.empty()) return {};
  std::vector<double> wanted;
  const double lo = curve.front().value, hi = curve.back().value;
  if (curve.size() == 1 || levels < 2) {
    wanted.push_back(hi);
  } else {
    // The last level is the best itself, not a sum that rounds past it.
    for (int i = 0; i < levels; ++i) {
      wanted.push_back(i == levels - 1 ? hi : lo + (hi - lo) * i / (levels - 1));
    }
  }
  if (report.target) wanted.push_back(*report.target);
  std::sort(wanted.begin(), wanted.end(), [&](double a, double b) { return Better(report, b, a); });
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<LevelCost> out;
  for (double level : wanted) {
    LevelCost c{level, 0, -1, false};
    for (const auto& b : curve) {
      if (!Better(report, level, b.value)) {
        c = {level, b.dollars, b.trial, true};
        break;
      }
    }
    out.push_back(c);
  }
  return out;
}

std::vector<CurveMarker> TrialMarkers(const TrialSummary& trial,
                                      const std::vector<SegmentRecord>& segments) {
  std::vector<CurveMarker> out;
  for (const auto& r : trial.reports) {
    if (r.decision == "STOP") out.push_back({r.epoch, "stop", r.reason});
    if (r.decision == "PAUSE") out.push_back({r.epoch, "pause", r.reason});
  }
  std::vector<const SegmentRecord*> mine;
  for (const auto& s : segments) {
    if (s.number == trial.record.number && s.study_id == trial.record.study_id) mine.push_back(&s);
  }
  std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->start < b->start; });
  for (size_t i = 0; i < mine.size(); ++i) {
    const SegmentRecord& s = *mine[i];
    if (i > 0 && s.start_epoch > 0) {
      const std::string& before = mine[i - 1]->end_reason;
      out.push_back({s.start_epoch, before == "paused" ? "promote" : "resume",
                     "resumed at epoch " + std::to_string(s.start_epoch) + " after " + before});
    }
    if (s.end_reason == "preempted" || s.end_reason == "expired") {
      int64_t epoch = s.start_epoch;
      for (const auto& r : trial.reports) {
        if (r.lease_id == s.lease_id) epoch = std::max(epoch, r.epoch);
      }
      out.push_back({epoch, s.end_reason == "preempted" ? "preempt" : "lost",
                     s.end_reason + " (lease " + s.lease_id + ")"});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.epoch < b.epoch; });
  return out;
}

std::vector<size_t> Downsample(size_t n, size_t max_points) {
  std::vector<size_t> out;
  if (n <= max_points || max_points < 2) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < max_points; ++k) out.push_back(k * (n - 1) / (max_points - 1));
  return out;
}

std::vector<size_t> TrialsToDraw(const StudyReport& report, size_t max_curves) {
  const size_t n = report.trials.size();
  if (n <= max_curves) return Downsample(n, n);
  std::set<size_t> keep;
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < n; ++i) index[report.trials[i].record.number] = i;
  for (auto number : ParetoFrontier(report)) keep.insert(index[number]);
  std::vector<size_t> ranked;
  for (size_t i = 0; i < n; ++i) {
    if (Ranked(report.trials[i])) ranked.push_back(i);
  }
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return Better(report, *report.trials[a].objective, *report.trials[b].objective);
  });
  for (size_t i = 0; i < ranked.size() && keep.size() < max_curves / 4; ++i) keep.insert(ranked[i]);
  const size_t rest = max_curves - keep.size();
  for (size_t i : Downsample(n, rest)) {
    if (keep.size() >= max_curves) break;
    keep.insert(i);
  }
  return {keep.begin(), keep.end()};
}

}  // namespace sift::coordinator

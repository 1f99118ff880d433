#include "search/multi/motpe_searcher.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"

namespace sift::search {

// Optuna's MOTPE weights for the good trials: each one's hypervolume contribution among them
// over the largest (a dominated one weighs nothing), so l(x) leans to the front's sparse parts.
// Default weights when no contribution is positive (one point, infeasible ones alone).
std::vector<double> MoTpeSearcher::BelowWeights(const std::vector<int64_t>& below) const {
  Points values;
  for (int64_t t : below) {
    const auto it =
        std::lower_bound(points_.begin(), points_.end(), t,
                         [](const TrialPoint& p, int64_t number) { return p.trial < number; });
    values.push_back(it->values);
  }
  std::vector<double> w = HypervolumeContributions(values, ReferencePoint(values));
  const double most = w.empty() ? 0.0 : *std::max_element(w.begin(), w.end());
  if (!(most > 0) || !std::isfinite(most)) return {};
  for (double& x : w) x /= most;
  return w;
}

size_t MoTpeSearcher::Observe(const StudyView& study) {
  points_ = EndedPoints(study);
  return points_.size();
}

TpeSearcher::Split MoTpeSearcher::SplitTrials(const StudyView& study) {
  const TpeOptions& o = options();
  const size_t n = points_.size();
  const auto n_below = std::min<int64_t>(
      static_cast<int64_t>(std::ceil(o.gamma * static_cast<double>(n))), o.gamma_max);
  Split s;
  s.below = ConstrainedTopTrials(points_, n_below);
  std::sort(s.below.begin(), s.below.end());
  s.below_weights = BelowWeights(s.below);
  // Trial order: the other observations, and with constant liar the running and pending trials.
  size_t next = 0;
  for (const TrialView& t : study.trials) {
    const bool liar =
        o.constant_liar && (t.state == TrialState::kRunning || t.state == TrialState::kPending);
    while (next < n && points_[next].trial < t.number) ++next;
    const bool observed = next < n && points_[next].trial == t.number;
    if ((observed && !std::binary_search(s.below.begin(), s.below.end(), t.number)) || liar) {
      s.above.push_back(t.number);
    }
  }
  const auto max_above = static_cast<size_t>(o.max_above);
  if (max_above > 0 && s.above.size() > max_above) {
    s.above.erase(s.above.begin(), s.above.end() - static_cast<std::ptrdiff_t>(max_above));
  }
  return s;
}

}  // namespace sift::search

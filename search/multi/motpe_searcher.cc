#include "search/multi/motpe_searcher.h"

#include <algorithm>
#include <cmath>

#include "search/multi/hypervolume.h"

namespace sift::search {

// Optuna's MOTPE weights for the good trials: each one's hypervolume contribution among them
// over the largest (a dominated one weighs nothing), so l(x) leans to the front's sparse parts.
// Default weights when no contribution is positive (one point, infeasible ones alone).
std::vector<double> MoTpeSearcher::BelowWeights(const std::vector<int64_t>& below) {
  Points values;
  for (int64_t t : below) values.push_back(points_.Find(t)->values);
  if (values == below_values_) return below_weights_;
  std::vector<double> w = HypervolumeContributions(values, ReferencePoint(values));
  const double most = w.empty() ? 0.0 : *std::max_element(w.begin(), w.end());
  if (!(most > 0) || !std::isfinite(most)) {
    w.clear();
  } else {
    for (double& x : w) x /= most;
  }
  below_values_ = std::move(values);
  below_weights_ = w;
  return w;
}

size_t MoTpeSearcher::Observe(const StudyView& study) {
  points_.Sync(study);
  return points_.size();
}

TpeSearcher::Split MoTpeSearcher::SplitTrials(const StudyView& study) {
  const TpeOptions& o = options();
  const size_t n = points_.size();
  const auto n_below = std::min<int64_t>(
      static_cast<int64_t>(std::ceil(o.gamma * static_cast<double>(n))), o.gamma_max);
  Split s;
  s.below = points_.Top(n_below);
  std::sort(s.below.begin(), s.below.end());
  s.below_weights = BelowWeights(s.below);
  // The other observations and, with constant liar, the running and pending trials: the newest
  // max_above of them (all when it is 0), read from the end back, in trial order.
  const auto max_above = static_cast<size_t>(o.max_above);
  for (auto t = study.trials.rbegin(); t != study.trials.rend(); ++t) {
    if (max_above > 0 && s.above.size() == max_above) break;
    const bool liar =
        o.constant_liar && (t->state == TrialState::kRunning || t->state == TrialState::kPending);
    const bool observed = points_.Find(t->number) != nullptr &&
                          !std::binary_search(s.below.begin(), s.below.end(), t->number);
    if (observed || liar) s.above.push_back(t->number);
  }
  std::reverse(s.above.begin(), s.above.end());
  return s;
}

}  // namespace sift::search

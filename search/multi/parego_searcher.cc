#include "search/multi/parego_searcher.h"

#include <algorithm>
#include <numeric>

#include "search/multi/parego.h"
#include "search/rng.h"

namespace sift::search {
namespace {

constexpr uint64_t kRefitStream = 0x50524654;  // "PRFT": the refit set's weights

}  // namespace

size_t ParegoSearcher::Observe(const StudyView& study) {
  if (cursor_.Advance(study, look_)) {
    points_ = EndedPoints(study);
    return points_.size();
  }
  for (int64_t number : look_) {
    std::optional<TrialPoint> now = EndedPoint(study, study.trials[static_cast<size_t>(number)]);
    const auto it =
        std::lower_bound(points_.begin(), points_.end(), number,
                         [](const TrialPoint& p, int64_t trial) { return p.trial < trial; });
    const bool had = it != points_.end() && it->trial == number;
    if (now && had) {
      *it = std::move(*now);
    } else if (now) {
      points_.insert(it, std::move(*now));
    } else if (had) {
      points_.erase(it);
    }
  }
  return points_.size();
}

GpSearcher::Rows ParegoSearcher::SelectRows(const StudyView& study) {
  const size_t k = ObjectiveCount(study);
  const size_t n_all = points_.size();
  const std::vector<double> scalars =
      ParegoScalars(points_, ParegoWeights(study.seed, study.trials.size(), k));
  const int64_t max_points = options().max_points;
  const size_t cap = max_points > 0 ? static_cast<size_t>(max_points) : n_all;
  Rows rows;
  if (n_all <= cap) {
    for (size_t j = 0; j < n_all; ++j) {
      rows.numbers.push_back(points_[j].trial);
      rows.scores.push_back(scalars[j]);
    }
  } else {
    // The best half by scalar (ties: the lower trial number), then the most recent others.
    std::vector<size_t> order(n_all);
    std::iota(order.begin(), order.end(), 0);
    const auto half = static_cast<std::ptrdiff_t>(cap / 2);
    std::nth_element(order.begin(), order.begin() + half, order.end(), [&](size_t a, size_t b) {
      return scalars[a] > scalars[b] || (scalars[a] == scalars[b] && a < b);
    });
    std::vector<int64_t> best, all(n_all);
    for (auto it = order.begin(); it != order.begin() + half; ++it) {
      best.push_back(points_[*it].trial);
    }
    std::sort(best.begin(), best.end());
    for (size_t j = 0; j < n_all; ++j) all[j] = points_[j].trial;
    rows.numbers = BestAndRecent(std::move(best), all.rbegin(), all.rend(), cap);
    for (int64_t number : rows.numbers) {
      const auto at = std::lower_bound(all.begin(), all.end(), number) - all.begin();
      rows.scores.push_back(scalars[static_cast<size_t>(at)]);
    }
  }
  // The refit set: the fit_window ended trials before the refit point, scalarized on their own.
  const auto m = static_cast<size_t>(GpRefitPoint(static_cast<int64_t>(n_all)));
  const auto window = static_cast<size_t>(options().fit_window);
  const size_t start = m > window ? m - window : 0;
  const std::vector<TrialPoint> fit(points_.begin() + static_cast<std::ptrdiff_t>(start),
                                    points_.begin() + static_cast<std::ptrdiff_t>(m));
  for (const TrialPoint& p : fit) rows.fit_numbers.push_back(p.trial);
  rows.fit_scores = ParegoScalars(fit, ParegoWeights(DeriveSeed(study.seed, {kRefitStream}), m, k));
  return rows;
}

}  // namespace sift::search

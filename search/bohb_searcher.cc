#include "search/bohb_searcher.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "search/tpe/parzen_estimator.h"

namespace sift::search {
namespace {

constexpr uint64_t kBohbStream = 0x424F4842;  // "BOHB"

int64_t MinPoints(const BohbOptions& o, const SearchSpace& space) {
  return o.min_points > 0 ? o.min_points : static_cast<int64_t>(space.size()) + 2;
}

}  // namespace

int64_t BohbSearcher::ModelLevel(const StudyView& study) {
  const int64_t need = MinPoints(options_, *study.space);
  levels_.Sync(study);
  const auto& levels = levels_.levels();
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    if (static_cast<int64_t>(it->second.scores.size()) >= need) return it->first;
  }
  return 0;
}

// Good: the best n_good (at most max_good), best first. Bad: the max_bad most recent of the
// others, best first. Unbounded, and while the bounds do not bind, that is every trial at the
// level in rank order, split at n_good.
std::pair<std::vector<LevelIndex::Entry>, std::vector<LevelIndex::Entry>> BohbSearcher::ModelSets(
    int64_t level) const {
  const LevelIndex::Level& lv = levels_.levels().at(level);
  const size_t n = lv.scores.size();
  size_t n_good = std::max<size_t>(
      2, static_cast<size_t>(options_.top_n_percent / 100.0 * static_cast<double>(n)));
  if (options_.max_good > 0) n_good = std::min(n_good, static_cast<size_t>(options_.max_good));
  const size_t max_bad = options_.max_bad > 0 ? static_cast<size_t>(options_.max_bad) : SIZE_MAX;
  std::vector<LevelIndex::Entry> good, bad;
  for (auto it = lv.ranked.begin(); it != lv.ranked.end() && good.size() < n_good; ++it) {
    good.push_back(*it);
  }
  // Bad: ranked after the last good one (none when every trial is good). Newest first, so at
  // most n_good are passed over.
  for (auto it = lv.scores.rbegin();
       good.size() == n_good && it != lv.scores.rend() && bad.size() < max_bad; ++it) {
    const LevelIndex::Entry e{it->second, it->first};
    if (LevelIndex::Better()(good.back(), e)) bad.push_back(e);
  }
  std::sort(bad.begin(), bad.end(), LevelIndex::Better());
  return {good, bad};
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> BohbSearcher::ModelTrials(
    const StudyView& study) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> out;
  const int64_t level = ModelLevel(study);
  if (level == 0) return out;
  const auto [good, bad] = ModelSets(level);
  for (const auto& e : good) out.first.push_back(e.number);
  for (const auto& e : bad) out.second.push_back(e.number);
  return out;
}

std::vector<Params> BohbSearcher::Suggest(const StudyView& study, int count) {
  const SearchSpace& space = *study.space;
  const size_t dims = space.size();
  const int64_t level = ModelLevel(study);
  std::vector<int> choices(dims);
  for (size_t d = 0; d < dims; ++d) {
    const ParamSpec& spec = space.params()[d];
    choices[d] = spec.numeric() ? 0 : static_cast<int>(spec.choices.size());
  }
  // Good and bad sets at the model level, as rows of unit values / category indices.
  std::vector<double> good, bad;
  if (level > 0) {
    const auto [picked, bad_entries] = ModelSets(level);
    auto add_rows = [&](const std::vector<LevelIndex::Entry>& entries, std::vector<double>& out) {
      for (const LevelIndex::Entry& e : entries) {
        const double* row = units_.Row(study, e.number);
        for (size_t d = 0; d < dims; ++d) {
          double u = std::isnan(row[d]) ? 0.5 : row[d];
          if (choices[d] != 0) u = std::min<double>(choices[d] - 1, std::floor(u * choices[d]));
          out.push_back(u);
        }
      }
    };
    add_rows(picked, good);
    add_rows(bad_entries, bad);
    if (bad.size() < 2 * dims) good.clear();  // too few bad points: no model yet
  }
  // Normal-reference bandwidths per dimension, from the good set or the bad set.
  auto bandwidths = [&](const std::vector<double>& rows) {
    const size_t n = rows.size() / dims;
    std::vector<double> bw(dims);
    for (size_t d = 0; d < dims; ++d) {
      double m = 0, s = 0;
      for (size_t i = 0; i < n; ++i) m += rows[i * dims + d];
      m /= static_cast<double>(n);
      for (size_t i = 0; i < n; ++i) s += (rows[i * dims + d] - m) * (rows[i * dims + d] - m);
      s = std::sqrt(s / std::max<double>(1.0, static_cast<double>(n) - 1.0));
      bw[d] = std::max(options_.min_bandwidth,
                       1.06 * s * std::pow(static_cast<double>(n), -1.0 / (4.0 + dims)));
    }
    return bw;
  };
  auto kde = [&](const std::vector<double>& rows, const std::vector<double>& bw, double widen) {
    ParzenEstimator est(choices);
    const size_t n = rows.size() / dims;
    std::vector<double> mu(dims), sigma(dims);
    std::vector<std::vector<double>> probs(dims);
    for (size_t i = 0; i < n; ++i) {
      for (size_t d = 0; d < dims; ++d) {
        const double v = rows[i * dims + d];
        if (choices[d] == 0) {
          mu[d] = v;
          sigma[d] = std::min(1.0, bw[d] * widen);
        } else {
          // Aitchison-Aitken: keep the observed choice with probability 1 - lambda.
          const int k = choices[d];
          const double lambda = std::clamp(bw[d] * widen, 0.0, (k - 1.0) / k);
          probs[d].assign(static_cast<size_t>(k), k > 1 ? lambda / (k - 1) : 0.0);
          probs[d][static_cast<size_t>(v)] = 1.0 - lambda + (k > 1 ? 0.0 : lambda);
        }
      }
      est.Add(1.0, mu, sigma, probs);
    }
    return est;
  };

  std::vector<Params> out;
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + i;
    Rng rng(DeriveSeed(study.seed, {number, kBohbStream}));
    const bool random = good.empty() || rng.Uniform() < options_.random_fraction;
    if (random) {
      out.push_back(space.Sample(rng));
      continue;
    }
    const std::vector<double> bw_good = bandwidths(good), bw_bad = bandwidths(bad);
    const ParzenEstimator l = kde(good, bw_good, 1.0), g = kde(bad, bw_bad, 1.0);
    const ParzenEstimator wide = kde(good, bw_good, options_.bandwidth_factor);
    std::vector<double> best;
    double best_score = -INFINITY;
    for (int64_t s = 0; s < options_.num_samples; ++s) {
      std::vector<double> x = wide.Sample(rng);
      const double score = l.LogPdf(x.data()) - g.LogPdf(x.data());
      if (best.empty() || score > best_score) {
        best_score = score;
        best = std::move(x);
      }
    }
    Params p;
    for (size_t d = 0; d < dims; ++d) {
      const ParamSpec& spec = space.params()[d];
      if (!space.IsActive(spec, p)) continue;
      p[spec.name] = choices[d] == 0 ? space.FromUnit(spec, best[d])
                                     : spec.choices[static_cast<size_t>(best[d])];
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace sift::search

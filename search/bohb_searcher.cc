#include "search/bohb_searcher.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace sift::search {
namespace {

constexpr uint64_t kBohbStream = 0x424F4842;  // "BOHB"

int64_t MinPoints(const BohbOptions& o, const SearchSpace& space) {
  return o.min_points > 0 ? o.min_points : static_cast<int64_t>(space.size()) + 2;
}

// Normal-reference bandwidths per dimension, from n rows of `dims` values.
std::vector<double> Bandwidths(const std::vector<double>& rows, size_t dims,
                               const BohbOptions& options) {
  const size_t n = rows.size() / dims;
  std::vector<double> bw(dims);
  for (size_t d = 0; d < dims; ++d) {
    double m = 0, s = 0;
    for (size_t i = 0; i < n; ++i) m += rows[i * dims + d];
    m /= static_cast<double>(n);
    for (size_t i = 0; i < n; ++i) s += (rows[i * dims + d] - m) * (rows[i * dims + d] - m);
    s = std::sqrt(s / std::max<double>(1.0, static_cast<double>(n) - 1.0));
    bw[d] = std::max(options.min_bandwidth,
                     1.06 * s * std::pow(static_cast<double>(n), -1.0 / (4.0 + dims)));
  }
  return bw;
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

void BohbSearcher::FitModels(const std::vector<int>& choices,
                             const std::vector<int64_t>& good_numbers) {
  const size_t dims = choices.size();
  // One component per row: a Gaussian per numeric dimension, Aitchison-Aitken per categorical.
  auto kde = [&](const std::vector<double>& rows, const std::vector<double>& bw, double widen,
                 ParzenEstimator& est) {
    est.Clear(choices);
    const size_t n = rows.size() / dims;
    mu_.resize(dims);
    sigma_.resize(dims);
    probs_.resize(dims);
    for (size_t i = 0; i < n; ++i) {
      for (size_t d = 0; d < dims; ++d) {
        const double v = rows[i * dims + d];
        if (choices[d] == 0) {
          mu_[d] = v;
          sigma_[d] = std::min(1.0, bw[d] * widen);
        } else {
          // Aitchison-Aitken: keep the observed choice with probability 1 - lambda.
          const int k = choices[d];
          const double lambda = std::clamp(bw[d] * widen, 0.0, (k - 1.0) / k);
          probs_[d].assign(static_cast<size_t>(k), k > 1 ? lambda / (k - 1) : 0.0);
          probs_[d][static_cast<size_t>(v)] = 1.0 - lambda + (k > 1 ? 0.0 : lambda);
        }
      }
      est.Add(1.0, mu_, sigma_, probs_);
    }
  };
  if (good_.generation != units_.generation() || good_.numbers != good_numbers) {
    const std::vector<double> bw_good = Bandwidths(good_rows_, dims, options_);
    kde(good_rows_, bw_good, 1.0, good_.l);
    kde(good_rows_, bw_good, options_.bandwidth_factor, good_.wide);
    good_.numbers = good_numbers;
    good_.generation = units_.generation();
  }
  kde(bad_rows_, Bandwidths(bad_rows_, dims, options_), 1.0, bad_kde_);
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
  std::vector<int64_t> good_numbers;
  good_rows_.clear();
  bad_rows_.clear();
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
    add_rows(picked, good_rows_);
    add_rows(bad_entries, bad_rows_);
    for (const LevelIndex::Entry& e : picked) good_numbers.push_back(e.number);
    if (bad_rows_.size() < 2 * dims) good_rows_.clear();  // too few bad points: no model yet
  }

  std::vector<Params> out;
  bool fitted = false;  // the KDEs, fitted at the first model-based suggestion of this ask
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + i;
    Rng rng(DeriveSeed(study.seed, {number, kBohbStream}));
    const bool random = good_rows_.empty() || rng.Uniform() < options_.random_fraction;
    if (random) {
      out.push_back(space.Sample(rng));
      continue;
    }
    if (!fitted) {
      FitModels(choices, good_numbers);
      fitted = true;
    }
    x_.resize(dims);
    best_.resize(dims);
    bool have_best = false;
    double best_score = -INFINITY;
    for (int64_t s = 0; s < options_.num_samples; ++s) {
      good_.wide.Sample(rng, x_.data());
      const double score = good_.l.LogPdf(x_.data()) - bad_kde_.LogPdf(x_.data());
      if (!have_best || score > best_score) {
        have_best = true;
        best_score = score;
        best_ = x_;
      }
    }
    Params p;
    for (size_t d = 0; d < dims; ++d) {
      const ParamSpec& spec = space.params()[d];
      if (!space.IsActive(spec, p)) continue;
      p[spec.name] = choices[d] == 0 ? space.FromUnit(spec, best_[d])
                                     : spec.choices[static_cast<size_t>(best_[d])];
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace sift::search

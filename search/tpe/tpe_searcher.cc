#include "search/tpe/tpe_searcher.h"

#include <algorithm>
#include <cmath>

namespace sift::search {
namespace {

constexpr uint64_t kTpeStream = 0x545045;  // "TPE"

}  // namespace

TpeKernelOptions TpeSearcherKernel() {
  TpeKernelOptions k;
  k.multivariate = true;
  k.bandwidth = TpeBandwidth::kScott;
  k.prior_weight = 2.0;
  k.magic_clip_scale = 0.7;
  return k;
}

// The good trials are the best gamma(n) of all (at most gamma_max); the bad ones the rest, past
// max_above as the most recent half plus a weighted sample of the older ones (see max_above).
// Read off the index: O((gamma_max + max_above) log n), not O(n).
size_t TpeSearcher::Observe(const StudyView& study) {
  index_.Sync(study);
  return index_.size();
}

TpeSearcher::Split TpeSearcher::SplitTrials(const StudyView& study) {
  const size_t n = index_.size();
  const size_t n_below =
      std::min<size_t>(static_cast<size_t>(std::ceil(options_.gamma * static_cast<double>(n))),
                       static_cast<size_t>(options_.gamma_max));
  Split s;
  auto best = index_.ranked().begin();
  for (size_t i = 0; i < n_below; ++i, ++best) s.below.push_back(best->number);
  std::sort(s.below.begin(), s.below.end());
  // Newest first: observations not in below, merged with the liars (both descending).
  std::vector<int64_t> liars;
  if (options_.constant_liar) {
    for (auto it = index_.open().rbegin(); it != index_.open().rend(); ++it) {
      const TrialState state = study.trials[static_cast<size_t>(*it)].state;
      if (state == TrialState::kRunning || state == TrialState::kPending) liars.push_back(*it);
    }
  }
  const size_t n_above = n - n_below + liars.size();
  const auto max_above = static_cast<size_t>(options_.max_above);
  const bool sampled = max_above > 0 && n_above > max_above;
  const size_t recent = sampled ? max_above - max_above / 2 : n_above;
  auto obs = index_.numbers().rbegin();
  auto liar = liars.begin();
  while (s.above.size() < recent) {
    const bool have_obs = obs != index_.numbers().rend();
    if (!have_obs && liar == liars.end()) break;
    if (!have_obs || (liar != liars.end() && *liar > *obs)) {
      s.above.push_back(*liar++);
    } else if (std::binary_search(s.below.begin(), s.below.end(), *obs)) {
      ++obs;
    } else {
      s.above.push_back(*obs++);
    }
  }
  std::reverse(s.above.begin(), s.above.end());
  if (!sampled || s.above.empty()) return s;
  // The older bad trials (observations before the recent ones; liars that old are left out):
  // k evenly spaced by position, read off the index's counts in O(k log n).
  const int64_t boundary = s.above.front();
  const size_t below_before = static_cast<size_t>(
      std::lower_bound(s.below.begin(), s.below.end(), boundary) - s.below.begin());
  const size_t old = index_.CountBefore(boundary) - below_before;
  const size_t k = std::min(max_above / 2, old);
  const size_t n_eff = old + s.above.size();  // the bad list Optuna would weight
  std::vector<int64_t> sample;
  size_t skipped = 0;  // below trials before the current sample; grows with p
  for (size_t j = 0; j < k; ++j) {
    const size_t p = old == k ? j : (2 * j + 1) * old / (2 * k);  // the middle of stratum j
    s.above_weights.push_back(TpeDefaultWeight(n_eff, p) * static_cast<double>(old) /
                              static_cast<double>(k));
    // The p-th observation not in below is the (p + skipped)-th observation, once skipped counts
    // the below trials up to it: a below trial at or before the (p + skipped)-th pushes it one
    // further. p grows with j, so skipped carries over: k + |below| lookups in all.
    int64_t t = index_.Kth(p + skipped);
    while (skipped < s.below.size() && s.below[skipped] <= t) t = index_.Kth(p + ++skipped);
    sample.push_back(t);
  }
  for (size_t i = 0; i < s.above.size(); ++i) {
    s.above_weights.push_back(TpeDefaultWeight(n_eff, old + i));
  }
  s.above.insert(s.above.begin(), sample.begin(), sample.end());
  return s;
}

void TpeSearcher::GroupRows(const std::vector<const double*>& rows, const std::vector<size_t>& dims,
                            const std::vector<int>& choices, const std::vector<double>& given,
                            const std::vector<const double*>& prior_rows) {
  // Sized for every row and filled by index (push_back into members stores their end each time).
  const size_t nd = dims.size();
  obs_.resize((rows.size() + prior_rows.size()) * nd);
  weights_.resize(rows.size() + prior_rows.size());
  double* obs = obs_.data();
  double* weights = weights_.data();
  size_t n = 0;
  auto take = [&](const double* row) {
    for (size_t d : dims) {
      if (std::isnan(row[d])) return false;
    }
    for (size_t j = 0; j < nd; ++j) {
      const double u = row[dims[j]];
      // Categoricals as their index: ToUnit put choice i at (i + 0.5) / k.
      obs[n * nd + j] =
          choices[j] == 0 ? u : std::min<double>(choices[j] - 1, std::floor(u * choices[j]));
    }
    return true;
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!take(rows[i])) continue;
    if (!given.empty()) weights[n] = given[i];
    ++n;
  }
  if (given.empty()) {
    for (size_t i = 0; i < n; ++i) weights[i] = TpeDefaultWeight(n, i);
  }
  for (const double* row : prior_rows) {
    if (!take(row)) continue;
    weights[n++] = priors_.weight;
  }
  obs_.resize(n * nd);
  weights_.resize(n);
}

bool TpeSearcher::SetPriors(Priors priors) {
  priors_ = std::move(priors);
  SplitPriors(priors_.points, options_.gamma, options_.gamma_max, &prior_good_, &prior_bad_);
  prior_space_ = nullptr;
  return true;
}

void TpeSearcher::SyncPriorRows(const SearchSpace& space) {
  if (prior_space_ == &space) return;
  prior_space_ = &space;
  prior_rows_ = PriorUnitRows(space, priors_.points);
  models_.clear();  // l was fitted with the old rows
}

void TpeSearcher::SampleGroup(const StudyView& study, const std::vector<size_t>& dims,
                              const Split& split, GroupModel& model, Rng& rng, Params& out) {
  const SearchSpace& space = *study.space;
  choices_.clear();
  for (size_t d : dims) {
    const ParamSpec& spec = space.params()[d];
    choices_.push_back(spec.numeric() ? 0 : static_cast<int>(spec.choices.size()));
  }
  TpeKernelOptions kernel = options_.kernel;
  kernel.multivariate = kernel.multivariate && dims.size() > 1;
  if (model.generation != units_.generation() || model.below != split.below ||
      model.below_weights != split.below_weights) {
    GroupRows(split.below_rows, dims, choices_, split.below_weights, split.prior_below_rows);
    BuildTpeEstimator(choices_, obs_.data(), obs_.size() / dims.size(), weights_.data(), kernel,
                      model.l);
    model.below = split.below;
    model.below_weights = split.below_weights;
    model.generation = units_.generation();
  }
  GroupRows(split.above_rows, dims, choices_, split.above_weights, split.prior_above_rows);
  BuildTpeEstimator(choices_, obs_.data(), obs_.size() / dims.size(), weights_.data(), kernel,
                    model.g);
  x_.resize(dims.size());
  best_.resize(dims.size());
  bool have_best = false;
  double best_score = -INFINITY;
  for (int64_t i = 0; i < options_.n_ei_candidates; ++i) {
    model.l.Sample(rng, x_.data());
    const double score = model.l.LogPdf(x_.data()) - model.g.LogPdf(x_.data());
    if (!have_best || score > best_score) {
      have_best = true;
      best_score = score;
      best_ = x_;
    }
  }
  for (size_t j = 0; j < dims.size(); ++j) {
    const ParamSpec& spec = space.params()[dims[j]];
    out[spec.name] = choices_[j] == 0 ? space.FromUnit(spec, best_[j])
                                      : spec.choices[static_cast<size_t>(best_[j])];
  }
}

std::vector<std::vector<size_t>> TpeGroups(const SearchSpace& space, bool group) {
  std::vector<std::vector<size_t>> groups;
  std::vector<const ParamSpec*> firsts;  // each group's first parameter
  for (size_t d = 0; d < space.size(); ++d) {
    const ParamSpec& spec = space.params()[d];
    if (spec.condition && !group) continue;
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      const auto& a = spec.condition;
      const auto& b = firsts[g]->condition;
      if (a.has_value() == b.has_value() &&
          (!a || (a->parent == b->parent && a->values == b->values))) {
        break;
      }
    }
    if (g == groups.size()) {
      groups.emplace_back();
      firsts.push_back(&spec);
    }
    groups[g].push_back(d);
  }
  return groups;
}

Params TpeSearcher::SuggestOne(const StudyView& study, uint64_t number, const Split& split) {
  const SearchSpace& space = *study.space;
  Rng rng(DeriveSeed(study.seed, {number, kTpeStream}));
  Params out;
  if (options_.kernel.multivariate) {
    // Groups in order of their first parameter: a condition's parent is declared before the
    // parameters it governs, so its value is known when their group comes.
    models_.resize(space.size() + groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (!space.IsActive(space.params()[groups_[g].front()], out)) continue;
      SampleGroup(study, groups_[g], split, models_[space.size() + g], rng, out);
    }
  }
  models_.resize(std::max(models_.size(), space.size()));
  for (size_t d = 0; d < space.size(); ++d) {
    const ParamSpec& spec = space.params()[d];
    if (out.count(spec.name) || !space.IsActive(spec, out)) continue;
    dims_.assign(1, d);
    SampleGroup(study, dims_, split, models_[d], rng, out);
  }
  return out;
}

std::pair<std::vector<int64_t>, std::vector<double>> TpeSearcher::BadTrials(
    const StudyView& study) {
  Observe(study);
  Split s = SplitTrials(study);
  return {std::move(s.above), std::move(s.above_weights)};
}

std::pair<std::vector<int64_t>, std::vector<double>> TpeSearcher::GoodTrials(
    const StudyView& study) {
  Observe(study);
  Split s = SplitTrials(study);
  return {std::move(s.below), std::move(s.below_weights)};
}

std::vector<Params> TpeSearcher::Suggest(const StudyView& study, int count) {
  std::vector<Params> out;
  const bool startup =
      static_cast<int64_t>(Observe(study)) + PriorTrialEquivalent(priors_) < options_.n_startup;
  Split split;
  if (!startup) {
    units_.Sync(study);
    split = SplitTrials(study);
    if (!priors_.points.empty()) {
      SyncPriorRows(*study.space);
      const size_t dims = study.space->size();
      for (size_t i : prior_good_) split.prior_below_rows.push_back(&prior_rows_[i * dims]);
      for (size_t i : prior_bad_) split.prior_above_rows.push_back(&prior_rows_[i * dims]);
    }
    if (options_.kernel.multivariate) groups_ = TpeGroups(*study.space, options_.group);
    for (int64_t t : split.below) split.below_rows.push_back(units_.Row(study, t));
    for (int64_t t : split.above) split.above_rows.push_back(units_.Row(study, t));
  }
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + i;
    if (startup) {
      Rng rng(DeriveSeed(study.seed, {number, kTpeStream, 0}));
      out.push_back(study.space->Sample(rng));
    } else {
      out.push_back(SuggestOne(study, number, split));
    }
  }
  return out;
}

}  // namespace sift::search

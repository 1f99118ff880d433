#include "search/bo/gp_searcher.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "search/bo/acquisition.h"
#include "search/sobol.h"
#include "search/sobol_searcher.h"

namespace sift::search {
namespace {

constexpr uint64_t kGpStream = 0x47504230;  // "GPB0"
constexpr int kTopTrials = 5;               // trials whose neighbourhoods are searched
constexpr int kPerturbations = 16;

size_t FeatureCount(const SearchSpace& space) {
  size_t f = 0;
  for (const auto& spec : space.params()) f += spec.numeric() ? 1 : spec.choices.size();
  return f;
}

void Encode(const SearchSpace& space, const Params& p, double* out) {
  for (const auto& spec : space.params()) {
    auto it = p.find(spec.name);
    if (spec.numeric()) {
      *out++ = it == p.end() ? 0.5 : space.ToUnit(spec, it->second);
    } else {
      const int idx = it == p.end() ? -1 : space.ChoiceIndex(spec, it->second);
      for (int c = 0; c < static_cast<int>(spec.choices.size()); ++c) *out++ = c == idx ? 1 : 0;
    }
  }
}

Params FromUnitVector(const SearchSpace& space, const double* u) {
  Params out;
  for (size_t i = 0; i < space.size(); ++i) {
    const ParamSpec& spec = space.params()[i];
    if (space.IsActive(spec, out)) out[spec.name] = space.FromUnit(spec, u[i]);
  }
  return out;
}

}  // namespace

bool GpRefitsAt(int64_t n) {
  if (n <= 25) return true;
  if (n <= 100) return n % 5 == 0;
  if (n <= 500) return n % 25 == 0;
  return n % 100 == 0;
}

int64_t GpRefitPoint(int64_t n) {
  while (n > 1 && !GpRefitsAt(n)) --n;
  return n;
}

struct GpSearcher::Model {
  explicit Model(size_t features) : gp(features), features(features) {}

  // Standardises y, refits hyperparameters if the refit set changed, and updates the factor.
  // The model's rows are x/y; the refit set (fit_n, fit_raw) is chosen by the caller.
  void Prepare(const std::vector<double>& x, const std::vector<double>& y,
               std::vector<int64_t> fit_n, std::vector<double> fit_raw,
               const std::function<const double*(int64_t)>& features_of) {
    const size_t n = y.size();
    Standardize(y, &mean, &sd);
    if (fit_n != fit_numbers || fit_raw != fit_y) {
      double fm, fs;
      Standardize(fit_raw, &fm, &fs);
      std::vector<double> ys(fit_raw.size());
      for (size_t i = 0; i < ys.size(); ++i) ys[i] = (fit_raw[i] - fm) / fs;
      std::vector<double> xs;
      xs.reserve(fit_n.size() * features);
      for (int64_t number : fit_n) {
        const double* row = features_of(number);
        xs.insert(xs.end(), row, row + features);
      }
      hyper = FitHyperparameters(xs, ys, features);
      fit_numbers = std::move(fit_n);
      fit_y = std::move(fit_raw);
    }
    gp.SetHyper(hyper);
    gp.SetPoints(x, n);
    std::vector<double> ys(n);
    for (size_t i = 0; i < n; ++i) ys[i] = (y[i] - mean) / sd;
    gp.SetTargets(ys);
    best = *std::max_element(ys.begin(), ys.end());
  }

  static void Standardize(const std::vector<double>& y, double* mean, double* sd) {
    double m = 0, s = 0;
    for (double v : y) m += v;
    m /= static_cast<double>(y.size());
    for (double v : y) s += (v - m) * (v - m);
    s = std::sqrt(s / static_cast<double>(y.size()));
    *mean = m;
    *sd = s > 1e-12 ? s : 1.0;
  }

  GaussianProcess gp;
  size_t features;
  GpHyper hyper;
  std::vector<int64_t> fit_numbers;
  std::vector<double> fit_y;
  double mean = 0, sd = 1, best = 0;
};

GpSearcher::GpSearcher(const SearchSpace& space, GpOptions options)
    : options_(options),
      features_(FeatureCount(space)),
      objective_(std::make_unique<Model>(features_)),
      cost_(std::make_unique<Model>(features_)) {}

GpSearcher::~GpSearcher() = default;

const double* GpSearcher::Features(const StudyView& study, int64_t number) {
  const size_t trials = study.trials.size();
  if (cached_space_ != study.space || cached_seed_ != study.seed || cached_.size() > trials) {
    cached_space_ = study.space;
    cached_seed_ = study.seed;
    cached_.clear();
    cached_x_.clear();
  }
  if (cached_.size() < trials) {
    cached_.resize(trials, 0);
    cached_x_.resize(trials * features_);
  }
  const auto i = static_cast<size_t>(number);
  double* row = cached_x_.data() + i * features_;
  if (!cached_[i]) {
    Encode(*study.space, study.trials[i].params, row);
    cached_[i] = 1;
  }
  return row;
}

bool GpSearcher::SetPriors(Priors priors) {
  priors_ = std::move(priors);
  prior_space_ = nullptr;
  return true;
}

void GpSearcher::SyncPriors(const SearchSpace& space) {
  if (prior_space_ == &space) return;
  prior_space_ = &space;
  const size_t n = priors_.points.size();
  prior_params_.assign(n, {});
  prior_x_.assign(n * features_, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (const ParamSpec& spec : space.params()) {
      auto it = priors_.points[i].params.find(spec.name);
      if (it != priors_.points[i].params.end() && FitsSpec(spec, it->second)) {
        prior_params_[i][spec.name] = it->second;
      }
    }
    Encode(space, prior_params_[i], prior_x_.data() + i * features_);
  }
  prior_used_.resize(n);
  for (size_t i = 0; i < n; ++i) prior_used_[i] = i;
  std::stable_sort(prior_used_.begin(), prior_used_.end(), [&](size_t a, size_t b) {
    return priors_.points[a].score > priors_.points[b].score;
  });
  if (options_.max_points > 0 && prior_used_.size() > static_cast<size_t>(options_.max_points)) {
    prior_used_.resize(static_cast<size_t>(options_.max_points));
  }
}

size_t GpSearcher::Observe(const StudyView&) { return index_.size(); }

GpSearcher::Rows GpSearcher::SelectRows(const StudyView&) {
  // Scores as CollectObservations gives them: a diverged trial has the worst of the others.
  const double worst = index_.WorstScore();
  const auto score_of = [&](int64_t number) {
    const double s = index_.Get(number).score;
    return std::isfinite(s) ? s : worst;
  };
  // The rows the GP conditions on, in trial order: every observation, or past max_points the best
  // half by score (ties: lower trial number; diverged trials last) and the most recent others.
  const size_t n_all = index_.size();
  const size_t cap = options_.max_points > 0 ? static_cast<size_t>(options_.max_points) : n_all;
  Rows rows;
  if (n_all <= cap) {
    rows.numbers.assign(index_.numbers().begin(), index_.numbers().end());
  } else {
    std::vector<int64_t> best;
    auto it = index_.by_score().begin();
    for (size_t r = 0; r < cap / 2; ++r, ++it) best.push_back(it->second);
    std::sort(best.begin(), best.end());
    rows.numbers =
        BestAndRecent(std::move(best), index_.numbers().rbegin(), index_.numbers().rend(), cap);
  }
  for (int64_t number : rows.numbers) rows.scores.push_back(score_of(number));
  // The refit set: the fit_window observations before the last refit point, in trial order (of
  // all observations, not only the model's rows).
  const size_t m = static_cast<size_t>(GpRefitPoint(static_cast<int64_t>(n_all)));
  const auto window = static_cast<size_t>(options_.fit_window);
  const size_t start = m > window ? m - window : 0;
  auto fit_it = m > start ? index_.numbers().find(index_.Kth(start)) : index_.numbers().end();
  for (size_t p = start; p < m; ++p, ++fit_it) {
    rows.fit_numbers.push_back(*fit_it);
    rows.fit_scores.push_back(score_of(*fit_it));
  }
  return rows;
}

std::vector<Params> GpSearcher::Suggest(const StudyView& study, int count) {
  const SearchSpace& space = *study.space;
  const size_t dims = space.size();
  index_.Sync(study);
  const int64_t n_startup = options_.n_startup > 0
                                ? options_.n_startup
                                : std::max<int64_t>(5, static_cast<int64_t>(dims) + 1);
  std::vector<Params> out;
  if (static_cast<int64_t>(Observe(study)) + PriorTrialEquivalent(priors_) < n_startup) {
    for (int i = 0; i < count; ++i)
      out.push_back(SobolSearcher::PointFor(study, study.trials.size() + i));
    return out;
  }
  Rows rows = SelectRows(study);
  std::vector<int64_t>& numbers = rows.numbers;
  // Priors are numbered -1, -2, ... (best first): rows before this study's, in the fit too. The
  // cost model refits on the objective's refit set less the trials without a cost.
  SyncPriors(space);
  std::vector<int64_t> prior_numbers, fit_n, cfit_n;
  std::vector<double> fit_y, cfit_y;
  for (size_t r = 0; r < prior_used_.size(); ++r) {
    prior_numbers.push_back(-1 - static_cast<int64_t>(r));
    fit_n.push_back(prior_numbers.back());
    fit_y.push_back(priors_.points[prior_used_[r]].score);
  }
  fit_n.insert(fit_n.end(), rows.fit_numbers.begin(), rows.fit_numbers.end());
  fit_y.insert(fit_y.end(), rows.fit_scores.begin(), rows.fit_scores.end());
  for (int64_t number : rows.fit_numbers) {
    const double cost = study.trials[static_cast<size_t>(number)].cost_dollars;
    if (options_.cost_aware && cost > 0) {
      cfit_n.push_back(number);
      cfit_y.push_back(std::log(cost));
    }
  }
  std::vector<double> x, y, cx, cy;
  for (size_t r = 0; r < prior_numbers.size(); ++r) {
    const double* row = prior_x_.data() + prior_used_[r] * features_;
    x.insert(x.end(), row, row + features_);
    y.push_back(priors_.points[prior_used_[r]].score);
  }
  numbers.insert(numbers.begin(), prior_numbers.begin(), prior_numbers.end());
  for (size_t i = prior_numbers.size(); i < numbers.size(); ++i) {
    const int64_t number = numbers[i];
    const TrialView& t = study.trials[static_cast<size_t>(number)];
    const double* row = Features(study, number);
    x.insert(x.end(), row, row + features_);
    y.push_back(rows.scores[i - prior_numbers.size()]);
    if (options_.cost_aware && t.cost_dollars > 0) {
      cx.insert(cx.end(), row, row + features_);
      cy.push_back(std::log(t.cost_dollars));
    }
  }
  const size_t n = y.size();
  const auto features_of = [&](int64_t number) -> const double* {
    if (number >= 0) return Features(study, number);
    return prior_x_.data() + prior_used_[static_cast<size_t>(-1 - number)] * features_;
  };
  Model& f = *objective_;
  f.gp.SetNoisyPrefix(prior_numbers.size(), 1.0 / priors_.weight - 1.0);
  f.Prepare(x, y, std::move(fit_n), std::move(fit_y), features_of);
  const bool use_cost = options_.cost_aware && cy.size() >= 2 && !cfit_n.empty();
  if (use_cost) cost_->Prepare(cx, cy, std::move(cfit_n), std::move(cfit_y), features_of);

  // Kriging believers for trials in flight.
  std::vector<double> feat(features_);
  for (int64_t number : index_.open()) {
    const TrialView& t = study.trials[static_cast<size_t>(number)];
    if ((t.state == TrialState::kRunning || t.state == TrialState::kPending) && !t.params.empty()) {
      Encode(space, t.params, feat.data());
      f.gp.AddPoint(feat.data());
    }
  }

  std::vector<double> k, kc;
  // The acquisition at unit point u; `exact` false gives the nearest-point upper bound.
  auto acquisition = [&](const double* u, bool exact) {
    Encode(space, FromUnitVector(space, u), feat.data());
    k.resize(f.gp.size());
    f.gp.KernelVector(feat.data(), k.data());
    const double mean = f.gp.Mean(k.data());
    double var;
    if (exact) {
      var = f.gp.Variance(k.data());
    } else {
      double kmax = 0;
      for (double v : k) kmax = std::max(kmax, v);
      var = std::max(f.gp.signal() - kmax * kmax / (f.gp.signal() + f.gp.noise()), 1e-12);
    }
    double a = LogExpectedImprovement(mean, std::sqrt(var), f.best);
    if (use_cost) {
      kc.resize(cost_->gp.size());
      cost_->gp.KernelVector(feat.data(), kc.data());
      a -= cost_->gp.Mean(kc.data()) * cost_->sd + cost_->mean;  // EI per expected dollar
    }
    return a;
  };

  // Trials ranked by score, for local candidates around the best.
  std::vector<size_t> ranked(n);
  for (size_t i = 0; i < n; ++i) ranked[i] = i;
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return y[a] > y[b] || (y[a] == y[b] && numbers[a] < numbers[b]);
  });

  for (int s = 0; s < count; ++s) {
    const uint64_t number = study.trials.size() + s;
    Rng rng(DeriveSeed(study.seed, {number, kGpStream}));
    const int64_t n_sobol = std::clamp<int64_t>(256000 / static_cast<int64_t>(n + 1), 128,
                                                std::max<int64_t>(128, options_.max_candidates));
    std::vector<double> cand;
    cand.reserve((n_sobol + kTopTrials * kPerturbations) * dims);
    const uint64_t sobol_seed = DeriveSeed(study.seed, {number, kGpStream, 1});
    for (int64_t j = 0; j < n_sobol; ++j) {
      const std::vector<double> p =
          SobolPoint(sobol_seed, static_cast<uint64_t>(j), static_cast<int>(dims));
      cand.insert(cand.end(), p.begin(), p.end());
    }
    for (size_t r = 0; r < std::min<size_t>(kTopTrials, n); ++r) {
      const int64_t top = numbers[ranked[r]];
      const Params& p = top >= 0 ? study.trials[static_cast<size_t>(top)].params
                                 : prior_params_[prior_used_[static_cast<size_t>(-1 - top)]];
      std::vector<double> base(dims);
      for (size_t d = 0; d < dims; ++d) {
        const ParamSpec& spec = space.params()[d];
        auto it = p.find(spec.name);
        base[d] = it == p.end() ? rng.Uniform() : space.ToUnit(spec, it->second);
      }
      for (int j = 0; j < kPerturbations; ++j) {
        for (size_t d = 0; d < dims; ++d) {
          const bool numeric = space.params()[d].numeric();
          double u = base[d];
          if (numeric) {
            u = std::clamp(u + 0.05 * rng.Normal(), 0.0, 1.0);
          } else if (rng.Uniform() < 0.15) {
            u = rng.Uniform();
          }
          cand.push_back(u);
        }
      }
    }
    const size_t n_cand = cand.size() / dims;
    std::vector<std::pair<double, size_t>> bound(n_cand);
    for (size_t c = 0; c < n_cand; ++c) bound[c] = {acquisition(&cand[c * dims], false), c};
    std::sort(bound.begin(), bound.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    // Exact values in order of the bound until no remaining bound can win.
    size_t best_c = bound[0].second;
    double best_a = -INFINITY;
    // Exact variances cost O(n^2) each: at most 64, fewer as n grows (30 at n = 1,000).
    const int64_t max_exact =
        std::clamp<int64_t>(30000000 / static_cast<int64_t>(n * n + 1), 16, 64);
    for (int64_t e = 0; e < max_exact && e < static_cast<int64_t>(n_cand); ++e) {
      if (bound[e].first <= best_a) break;
      const double a = acquisition(&cand[bound[e].second * dims], true);
      if (a > best_a) {
        best_a = a;
        best_c = bound[e].second;
      }
    }
    // Pattern search on the numeric coordinates around the winner.
    std::vector<double> u(cand.begin() + best_c * dims, cand.begin() + (best_c + 1) * dims);
    const double finest = n <= 500 ? 0.009 : 0.019;  // one round fewer for large n
    for (double step = 0.04; step > finest; step *= 0.5) {
      for (size_t d = 0; d < dims; ++d) {
        if (!space.params()[d].numeric()) continue;
        for (double sign : {1.0, -1.0}) {
          const double old = u[d];
          u[d] = std::clamp(old + sign * step, 0.0, 1.0);
          if (u[d] == old) continue;
          const double a = acquisition(u.data(), true);
          if (a > best_a) {
            best_a = a;
            break;
          }
          u[d] = old;
        }
      }
    }
    Params chosen = FromUnitVector(space, u.data());
    Encode(space, chosen, feat.data());
    f.gp.AddPoint(feat.data());  // the next suggestion of the batch sees this one as pending
    out.push_back(std::move(chosen));
  }
  f.gp.Truncate(n);
  return out;
}

}  // namespace sift::search

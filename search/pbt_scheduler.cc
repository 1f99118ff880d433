#include "search/pbt_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sift::search {
namespace {

// NaN (a diverged member) ranks below every number.
double Rankable(double score) { return std::isnan(score) ? -INFINITY : score; }

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// Ray's quantile size: ceil(n * q), at most half the population, so bottom and top never meet.
size_t QuantileSize(size_t n, double quantile) {
  const auto k = static_cast<size_t>(std::ceil(static_cast<double>(n) * quantile));
  return std::min(k, n / 2);
}

// `pick` in [0, 1) chooses the factor, or for a categorical the direction.
ParamValue Perturb(const PbtOptions& options, const SearchSpace& space, const ParamSpec& spec,
                   const ParamValue& value, double pick) {
  if (!spec.numeric()) {  // one choice up or down, as Ray shifts a list's index
    const int i = space.ChoiceIndex(spec, value);
    const int last = static_cast<int>(spec.choices.size()) - 1;
    if (i < 0) return value;
    const int shifted = std::clamp(i + (pick < 0.5 ? -1 : 1), 0, last);
    return spec.choices[static_cast<size_t>(shifted)];
  }
  double v = 0;
  AsDouble(value, &v);
  const size_t n = options.perturb.size();
  const size_t factor = std::min(n - 1, static_cast<size_t>(pick * static_cast<double>(n)));
  v = std::clamp(v * options.perturb[factor], spec.low, spec.high);
  if (spec.type == ParamType::kInt) return static_cast<int64_t>(std::round(v));
  return v;
}

}  // namespace

Params ExplorePbtParams(const PbtOptions& options, const SearchSpace& space, const Params& donor,
                        Rng& rng, std::vector<std::string>* changes) {
  Params out = donor;
  for (const auto& name : options.mutable_params) {
    const ParamSpec* spec = space.Find(name);
    auto it = out.find(name);
    if (spec == nullptr || it == out.end()) continue;  // inactive under the donor's others
    // Every draw every time, so one parameter's branch does not shift the next one's stream.
    const bool resample = rng.Uniform() < options.resample_probability;
    const double u = rng.Uniform();
    const double pick = rng.Uniform();
    const ParamValue before = it->second;
    it->second = resample ? space.FromUnit(*spec, u) : Perturb(options, space, *spec, before, pick);
    changes->push_back(name + " " + ToString(before) + " -> " + ToString(it->second) +
                       (resample ? " (resampled)" : ""));
  }
  return out;
}

std::vector<Exploit> PlanPbtInterval(const PbtOptions& options, const SearchSpace* space,
                                     uint64_t seed, int64_t epoch,
                                     const std::vector<PbtMember>& members) {
  // Worst first; among equal scores the later trial ranks lower, so ties split the same way
  // on every replay.
  std::vector<const PbtMember*> ranked;
  for (const auto& m : members) ranked.push_back(&m);
  std::sort(ranked.begin(), ranked.end(), [](const PbtMember* a, const PbtMember* b) {
    const double sa = Rankable(a->score), sb = Rankable(b->score);
    return sa < sb || (sa == sb && a->trial > b->trial);
  });
  const size_t k = QuantileSize(ranked.size(), options.quantile);
  std::vector<const PbtMember*> donors;
  for (size_t i = ranked.size() - k; i < ranked.size(); ++i) {
    if (ranked[i]->has_checkpoint && std::isfinite(ranked[i]->score)) donors.push_back(ranked[i]);
  }
  std::vector<Exploit> plan;
  if (donors.empty()) return plan;
  for (size_t i = 0; i < k; ++i) {
    const PbtMember& m = *ranked[i];
    if (!m.can_resume) continue;
    Rng rng(
        DeriveSeed(seed, {0x9B7ULL, static_cast<uint64_t>(epoch), static_cast<uint64_t>(m.trial)}));
    const PbtMember& donor = *donors[rng.Below(donors.size())];
    // Copying an equal member gains nothing and would only add noise to the lineage.
    if (!(Rankable(m.score) < donor.score)) continue;
    std::vector<std::string> changes;
    Exploit e;
    e.trial = m.trial;
    e.from_trial = donor.trial;
    e.epoch = epoch;
    e.params = space != nullptr ? ExplorePbtParams(options, *space, donor.params, rng, &changes)
                                : donor.params;
    e.reason = "pbt: epoch " + std::to_string(epoch) + ": copies trial " +
               std::to_string(donor.trial) + " (" + Number(donor.score) + " > " + Number(m.score) +
               ")";
    for (size_t c = 0; c < changes.size(); ++c) e.reason += (c == 0 ? "; " : ", ") + changes[c];
    plan.push_back(std::move(e));
  }
  std::sort(plan.begin(), plan.end(),
            [](const Exploit& a, const Exploit& b) { return a.trial < b.trial; });
  return plan;
}

Decision PbtScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  if (!IsMember(trial.number)) {
    return Decision::Stop("pbt: not a member; the population is the first " +
                          std::to_string(options_.population) + " trials");
  }
  const int64_t e = trial.LastResource();
  if (e < study.max_resource && e % options_.interval_epochs == 0) {
    return Decision::Pause("pbt: interval at epoch " + std::to_string(e) +
                           "; waiting for the population");
  }
  return Decision::Continue();
}

bool PbtScheduler::IntervalComplete(const StudyView& study, int64_t epoch) const {
  if (static_cast<int64_t>(study.trials.size()) < options_.population) return false;
  for (int64_t n = 0; n < options_.population; ++n) {
    const TrialView& t = study.trials[static_cast<size_t>(n)];
    if (t.LastResource() < epoch && !IsTerminal(t.state)) return false;
  }
  return true;
}

std::optional<int64_t> PbtScheduler::NextPromotion(const StudyView& study) {
  std::optional<int64_t> best;
  int64_t best_epoch = 0;
  const int64_t members = std::min<int64_t>(options_.population, study.trials.size());
  for (int64_t n = 0; n < members; ++n) {
    const TrialView& t = study.trials[static_cast<size_t>(n)];
    if (t.state != TrialState::kPaused) continue;
    if (best && t.LastResource() >= best_epoch) continue;
    if (!IntervalComplete(study, t.LastResource())) continue;
    best = n;
    best_epoch = t.LastResource();
  }
  return best;
}

std::set<std::pair<int64_t, int64_t>> PbtScheduler::CheckpointsToKeep(
    const StudyView& study) const {
  const int64_t members = std::min<int64_t>(options_.population, study.trials.size());
  std::set<int64_t> waiting_at;
  for (int64_t n = 0; n < members; ++n) {
    const TrialView& t = study.trials[static_cast<size_t>(n)];
    if (t.state == TrialState::kPaused) waiting_at.insert(t.LastResource());
  }
  std::set<std::pair<int64_t, int64_t>> keep;
  for (int64_t n = 0; n < members; ++n) {
    for (int64_t epoch : study.trials[static_cast<size_t>(n)].checkpoints) {
      if (waiting_at.count(epoch)) keep.emplace(n, epoch);
    }
  }
  return keep;
}

std::vector<PbtMember> PbtScheduler::MembersAt(const StudyView& study, int64_t epoch) const {
  std::vector<PbtMember> out;
  const int64_t members = std::min<int64_t>(options_.population, study.trials.size());
  for (int64_t n = 0; n < members; ++n) {
    const TrialView& t = study.trials[static_cast<size_t>(n)];
    auto v = t.values.find(epoch);
    if (v == t.values.end()) continue;  // ended before the interval
    PbtMember m;
    m.trial = n;
    m.score = study.Score(v->second);
    m.has_checkpoint = t.checkpoints.count(epoch) > 0;
    m.can_resume = !IsTerminal(t.state);
    m.params = t.params;
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<Exploit> PbtScheduler::ExploitOnResume(const StudyView& study, int64_t trial) {
  if (!IsMember(trial) || trial >= static_cast<int64_t>(study.trials.size())) return std::nullopt;
  const TrialView& t = study.trials[static_cast<size_t>(trial)];
  if (t.state != TrialState::kPaused || !IntervalComplete(study, t.LastResource())) {
    return std::nullopt;
  }
  const int64_t epoch = t.LastResource();
  for (auto& e :
       PlanPbtInterval(options_, study.space, study.seed, epoch, MembersAt(study, epoch))) {
    if (e.trial == trial) return std::move(e);
  }
  return std::nullopt;
}

}  // namespace sift::search

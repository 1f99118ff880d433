#include "search/multi/nsga2_searcher.h"

#include <algorithm>
#include <cmath>

#include "search/multi/objective_vectors.h"
#include "search/rng.h"

namespace sift::search {
namespace {

constexpr uint64_t kNsga2Stream = 0x4E534741;  // "NSGA"
constexpr int kAttempts = 8;

Points ValuesOf(const std::vector<TrialPoint>& points) {
  Points out;
  for (const TrialPoint& p : points) out.push_back(p.values);
  return out;
}

// A trial's parameters in the unit cube, NaN where inactive.
std::vector<double> Genome(const SearchSpace& space, const Params& params) {
  std::vector<double> g(space.size(), NAN);
  for (size_t d = 0; d < space.size(); ++d) {
    const ParamSpec& spec = space.params()[d];
    const auto it = params.find(spec.name);
    if (it != params.end()) g[d] = space.ToUnit(spec, it->second);
  }
  return g;
}

}  // namespace

void Nsga2Generations::Sync(const StudyView& study) {
  if (cursor_.Advance(study, look_)) {
    ended_.clear();
    valid_ = 0;
    stale_.clear();
  }
  if (ended_.size() < study.trials.size()) ended_.resize(study.trials.size());
  for (int64_t number : look_) {
    std::optional<TrialPoint> now = EndedPoint(study, study.trials[static_cast<size_t>(number)]);
    std::optional<TrialPoint>& kept = ended_[static_cast<size_t>(number)];
    if (now == kept) continue;
    kept = std::move(now);
    const auto h = static_cast<size_t>(number / population_);
    if (h + 1 < valid_) stale_.insert(h);
  }
}

bool Nsga2Generations::Step(size_t h) {
  std::vector<TrialPoint> pool = parents_[h].points;
  const size_t end = std::min(ended_.size(), (h + 1) * static_cast<size_t>(population_));
  for (size_t n = h * static_cast<size_t>(population_); n < end; ++n) {
    if (ended_[n]) pool.push_back(*ended_[n]);
  }
  std::vector<TrialPoint> points;
  for (int i :
       Nsga2Survivors(ValuesOf(pool), ConstrainedRanks(pool), static_cast<size_t>(population_))) {
    points.push_back(std::move(pool[static_cast<size_t>(i)]));
  }
  Parents& next = parents_[h + 1];
  if (points == next.points) return false;
  next.points = std::move(points);
  next.ranks = ConstrainedRanks(next.points);
  next.crowding = CrowdingByRank(ValuesOf(next.points), next.ranks);
  return true;
}

const Nsga2Generations::Parents& Nsga2Generations::Get(int64_t generation) {
  const auto g = static_cast<size_t>(generation);
  if (parents_.size() <= g) parents_.resize(g + 1);
  // Generation 0 has no parents; generation h + 1's survive from generation h's and h's results.
  // Stale generations first, in order: parents that come out the same leave the next generation's
  // inputs as they were, so a late result that does not survive costs one generation.
  valid_ = std::max<size_t>(valid_, 1);
  while (!stale_.empty() && *stale_.begin() + 1 <= g) {
    const size_t h = *stale_.begin();
    stale_.erase(stale_.begin());
    if (Step(h) && h + 2 < valid_) stale_.insert(h + 1);
  }
  for (; valid_ <= g; ++valid_) Step(valid_ - 1);
  return parents_[g];
}

std::vector<int64_t> Nsga2Searcher::Parents(const StudyView& study, int64_t generation) const {
  Nsga2Generations fresh(options_.population);
  fresh.Sync(study);
  std::vector<int64_t> out;
  for (const TrialPoint& p : fresh.Get(generation).points) out.push_back(p.trial);
  return out;
}

Params Nsga2Searcher::Child(const StudyView& study, const Nsga2Generations::Parents& parents,
                            uint64_t number) const {
  const SearchSpace& space = *study.space;
  Rng rng(DeriveSeed(study.seed, {number, kNsga2Stream}));
  const auto params = [&](int i) -> const Params& {
    return study.trials[static_cast<size_t>(parents.points[static_cast<size_t>(i)].trial)].params;
  };
  // A child equal to a parent would train that trial again (one parent won both tournaments
  // and nothing mutated: about half the time in a small space), so it is drawn again, from the
  // same stream, a few times.
  Params out;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::vector<int> pair = TournamentParents(parents.ranks, parents.crowding, 2, rng);
    std::vector<double> a = Genome(space, params(pair[0]));
    std::vector<double> b = Genome(space, params(pair[1]));
    // A coordinate inactive in one parent takes the other's; in both, a fresh draw.
    for (size_t d = 0; d < a.size(); ++d) {
      if (std::isnan(a[d]) && std::isnan(b[d])) a[d] = b[d] = rng.Uniform();
      if (std::isnan(a[d])) a[d] = b[d];
      if (std::isnan(b[d])) b[d] = a[d];
    }
    const std::vector<double> child = Nsga2Children(a, b, options_.variation, rng).first;
    out.clear();
    for (size_t d = 0; d < space.size(); ++d) {
      const ParamSpec& spec = space.params()[d];
      if (space.IsActive(spec, out)) out[spec.name] = space.FromUnit(spec, child[d]);
    }
    if (out != params(pair[0]) && out != params(pair[1])) break;
  }
  return out;
}

std::vector<Params> Nsga2Searcher::Suggest(const StudyView& study, int count) {
  generations_.Sync(study);
  std::vector<Params> out;
  int64_t generation = -1;
  const Nsga2Generations::Parents* parents = nullptr;
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + static_cast<size_t>(i);
    const auto g = static_cast<int64_t>(number) / options_.population;
    if (g != generation) {
      generation = g;
      parents = &generations_.Get(g);
    }
    if (parents->points.size() < 2) {
      Rng rng(DeriveSeed(study.seed, {number, kNsga2Stream, 0}));
      out.push_back(study.space->Sample(rng));
    } else {
      out.push_back(Child(study, *parents, number));
    }
  }
  return out;
}

}  // namespace sift::search

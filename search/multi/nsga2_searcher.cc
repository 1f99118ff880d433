#include "search/multi/nsga2_searcher.h"

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

std::vector<TrialPoint> Nsga2Searcher::ParentPoints(const StudyView& study,
                                                    int64_t generation) const {
  const std::vector<TrialPoint> ended = EndedPoints(study);
  const auto size = static_cast<size_t>(options_.population);
  std::vector<TrialPoint> pool;
  size_t next = 0;
  for (int64_t g = 0; g < generation; ++g) {
    const int64_t end = (g + 1) * options_.population;
    for (; next < ended.size() && ended[next].trial < end; ++next) pool.push_back(ended[next]);
    std::vector<TrialPoint> survivors;
    for (int i : Nsga2Survivors(ValuesOf(pool), ConstrainedRanks(pool), size)) {
      survivors.push_back(pool[static_cast<size_t>(i)]);
    }
    pool = std::move(survivors);
  }
  return pool;
}

std::vector<int64_t> Nsga2Searcher::Parents(const StudyView& study, int64_t generation) const {
  std::vector<int64_t> out;
  for (const TrialPoint& p : ParentPoints(study, generation)) out.push_back(p.trial);
  return out;
}

Params Nsga2Searcher::Child(const StudyView& study, const std::vector<TrialPoint>& parents,
                            uint64_t number) const {
  const SearchSpace& space = *study.space;
  Rng rng(DeriveSeed(study.seed, {number, kNsga2Stream}));
  const std::vector<int> ranks = ConstrainedRanks(parents);
  const std::vector<double> crowding = CrowdingByRank(ValuesOf(parents), ranks);
  const auto params = [&](int i) -> const Params& {
    return study.trials[static_cast<size_t>(parents[static_cast<size_t>(i)].trial)].params;
  };
  // A child equal to a parent would train that trial again (one parent won both tournaments
  // and nothing mutated: about half the time in a small space), so it is drawn again, from the
  // same stream, a few times.
  Params out;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::vector<int> pair = TournamentParents(ranks, crowding, 2, rng);
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
  std::vector<Params> out;
  int64_t generation = -1;
  std::vector<TrialPoint> parents;
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + static_cast<size_t>(i);
    const auto g = static_cast<int64_t>(number) / options_.population;
    if (g != generation) {
      generation = g;
      parents = ParentPoints(study, g);
    }
    if (parents.size() < 2) {
      Rng rng(DeriveSeed(study.seed, {number, kNsga2Stream, 0}));
      out.push_back(study.space->Sample(rng));
    } else {
      out.push_back(Child(study, parents, number));
    }
  }
  return out;
}

}  // namespace sift::search

#include "search/sobol_searcher.h"

#include "search/sobol.h"

namespace sift::search {

Params SobolSearcher::PointFor(const StudyView& study, uint64_t number) {
  const SearchSpace& space = *study.space;
  const std::vector<double> u =
      SobolPoint(DeriveSeed(study.seed, {0x534F424CULL}), number, static_cast<int>(space.size()));
  Params out;
  for (size_t i = 0; i < space.size(); ++i) {
    const ParamSpec& spec = space.params()[i];
    if (space.IsActive(spec, out)) out[spec.name] = space.FromUnit(spec, u[i]);
  }
  return out;
}

std::vector<Params> SobolSearcher::Suggest(const StudyView& study, int count) {
  std::vector<Params> out;
  for (int i = 0; i < count; ++i) out.push_back(PointFor(study, study.trials.size() + i));
  return out;
}

}  // namespace sift::search

// Observations carried over from earlier studies (a config's `warm_start:`): what TPE and GP
// learn from before this study has results of its own. They are never trials of this study: no
// number, no budget, no report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/param_value.h"
#include "search/space.h"

namespace sift::search {

// Default of warm_start.weight.
inline constexpr double kDefaultPriorWeight = 0.5;

struct Prior {
  Params params;       // as the earlier study ran them; names this space lacks are ignored
  double score = 0;    // the trial's final value, oriented by this study (larger is better)
  int64_t source = 0;  // the earlier study's id: each source is ranked on its own
};

struct Priors {
  std::vector<Prior> points;
  // How much one prior point counts against one of this study's trials, in (0, 1]: a Parzen
  // component's weight in TPE, and the GP's noise variance divided by it in GP.
  double weight = kDefaultPriorWeight;
};

// How many of this study's trials the priors stand for when a searcher decides whether its
// random start is over: weight times their count, rounded up (20 priors at 0.5 stand for 10).
int64_t PriorTrialEquivalent(const Priors& priors);

// A prior's parameters in this space's unit cube, one row of space.size() values per prior: NaN
// where the prior lacks the parameter, the parameter is inactive under the prior's values, or
// its value does not fit this space (another type, outside the range, a choice it lacks).
std::vector<double> PriorUnitRows(const SearchSpace& space, const std::vector<Prior>& priors);

// Whether `value` is one `spec` can take (type, range, choice), as a prior's value is judged.
bool FitsSpec(const ParamSpec& spec, const ParamValue& value);

// The names of parameters both spaces have with the same type (float, int, categorical): a
// warm start needs at least one.
std::vector<std::string> SharedParams(const SearchSpace& a, const SearchSpace& b);

// Each source's priors split as TPE splits its trials: the best ceil(gamma n) (at most
// gamma_max) of each source are good, the rest bad. Indices into `priors`, in order.
void SplitPriors(const std::vector<Prior>& priors, double gamma, int64_t gamma_max,
                 std::vector<size_t>* good, std::vector<size_t>* bad);

}  // namespace sift::search

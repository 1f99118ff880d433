// Search spaces and a sequential study loop shared by the searcher tests.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "search/searcher.h"

namespace sift::search::testing {

inline ParamSpec FloatParam(std::string name, double lo, double hi, Scale s = Scale::kLinear) {
  ParamSpec p;
  p.name = std::move(name);
  p.low = lo;
  p.high = hi;
  p.scale = s;
  return p;
}
inline ParamSpec IntParam(std::string name, double lo, double hi, Scale s = Scale::kLinear) {
  ParamSpec p = FloatParam(std::move(name), lo, hi, s);
  p.type = ParamType::kInt;
  return p;
}
inline ParamSpec CatParam(std::string name, std::vector<ParamValue> choices) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = ParamType::kCategorical;
  p.choices = std::move(choices);
  return p;
}

// lr (log), layers (int), optimizer (cat), momentum only under sgd, beta only under adam.
inline SearchSpace MixedSpace() {
  ParamSpec momentum = FloatParam("momentum", 0.0, 0.99);
  momentum.condition = Condition{"optimizer", {std::string("sgd")}};
  ParamSpec beta = IntParam("warmup", 0, 5);
  beta.condition = Condition{"optimizer", {std::string("adam")}};
  return SearchSpace(
      {FloatParam("lr", 1e-5, 1e-1, Scale::kLog), IntParam("layers", 1, 4),
       CatParam("optimizer", {std::string("sgd"), std::string("adam"), std::string("rmsprop")}),
       momentum, beta});
}
// MixedSpace with lr's range widened to [1e-7, 1e-1]: the same trials, other unit rows (a cache
// keyed on trial numbers alone would go stale).
inline SearchSpace MixedSpaceWideLr() {
  std::vector<ParamSpec> params = MixedSpace().params();
  params[0].low = 1e-7;
  return SearchSpace(params);
}
inline SearchSpace CategoricalSpace() {
  return SearchSpace({CatParam("a", {std::string("x"), std::string("y"), std::string("z")}),
                      CatParam("b", {int64_t{1}, int64_t{2}})});
}
inline SearchSpace OneDimSpace() { return SearchSpace({FloatParam("x", -2.0, 3.0)}); }

// A smooth objective (to maximise) over any of the spaces above, using unit coordinates.
inline double Objective(const SearchSpace& space, const Params& p) {
  double v = 0;
  for (const auto& spec : space.params()) {
    auto it = p.find(spec.name);
    if (it == p.end()) continue;
    const double u = space.ToUnit(spec, it->second);
    v -= (u - 0.3) * (u - 0.3);
  }
  return v;
}

// A second objective, to minimize, in conflict with Objective: the distance from 0.7 instead of
// 0.3. And a constrained metric: the first parameter's unit value, at most 0.9.
inline double SecondObjective(const SearchSpace& space, const Params& p) {
  double v = 0;
  for (const auto& spec : space.params()) {
    auto it = p.find(spec.name);
    if (it == p.end()) continue;
    const double u = space.ToUnit(spec, it->second);
    v += (u - 0.7) * (u - 0.7);
  }
  return v;
}
inline double ConstrainedMetric(const SearchSpace& space, const Params& p) {
  const ParamSpec& first = space.params().front();
  return space.ToUnit(first, p.at(first.name));
}

// Asks one configuration at a time and completes it with Objective, `n` times (stops early when
// the searcher is exhausted). `check` sees each suggestion. With `several`, the study also
// minimizes SecondObjective under ConstrainedMetric <= 0.9.
template <class Check>
StudyView RunStudy(Searcher& s, const SearchSpace& space, int n, uint64_t seed, Check check,
                   bool several = false) {
  StudyView study;
  study.space = &space;
  study.seed = seed;
  study.max_resource = 1;
  if (several) {
    study.objectives = {{"a", true}, {"b", false}};
    study.constraints = {{"c", 0.9, true}};
  }
  for (int i = 0; i < n; ++i) {
    auto next = s.Suggest(study, 1);
    if (next.empty()) break;
    check(study, next[0]);
    TrialView t;
    t.number = i;
    t.params = next[0];
    t.state = TrialState::kCompleted;
    t.values[1] = Objective(space, t.params);
    if (several) {
      t.more_values = {CurveValues{{1, SecondObjective(space, t.params)}}};
      t.constraint_values = {CurveValues{{1, ConstrainedMetric(space, t.params)}}};
    }
    t.cost_dollars = 0.01 * (1 + (i % 3));
    study.trials.push_back(t);
  }
  return study;
}

}  // namespace sift::search::testing

// Suggestions of Sift's TPE at a fixed history, for comparing its proposal distribution with
// Optuna's on the same history (tpe_vs_optuna.py). One float parameter x in [low, high],
// maximized. Reads "x value" lines from stdin; prints one suggestion per seed 0..n-1.
// Usage: search_tpe_suggest N LOW HIGH < history
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "search/tpe/tpe_searcher.h"

int main(int argc, char** argv) {
  using namespace sift::search;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N LOW HIGH < history\n", argv[0]);
    return 2;
  }
  ParamSpec x;
  x.name = "x";
  x.low = std::atof(argv[2]);
  x.high = std::atof(argv[3]);
  const SearchSpace space({x});
  StudyView study;
  study.space = &space;
  double value = 0, at = 0;
  while (std::cin >> at >> value) {
    TrialView t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.params["x"] = at;
    t.state = TrialState::kCompleted;
    t.values[1] = value;
    study.trials.push_back(t);
  }
  for (int seed = 0; seed < std::atoi(argv[1]); ++seed) {
    study.seed = static_cast<uint64_t>(seed);
    TpeOptions o;
    o.kernel = TpeKernelOptions{};  // Optuna 3.1's univariate kernel, as tpe_vs_optuna.py compares
    TpeSearcher tpe(o);
    std::printf("%.17g\n", std::get<double>(tpe.Suggest(study, 1)[0].at("x")));
  }
  return 0;
}

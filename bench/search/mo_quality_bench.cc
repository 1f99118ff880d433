// Median hypervolume after 100 and 200 evaluations over 10 seeds on ZDT1, ZDT2 and DTLZ2 (two
// objectives, 10 variables in [0, 1]) and on ZDT1 over a mixed space (8 floats, an integer and a
// categorical) for the searchers that take several objectives; Optuna
// 3.1's multi-objective samplers (mo_reference.py, same problems and reference points) printed
// alongside, with the best of them per budget.
// Usage: search_mo_quality_bench [optuna_mo.txt] [seeds] [searcher[:key=value]...,...]
//                                [first seed]
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>

#include "bench/search/bench_util.h"
#include "bench/search/test_functions.h"
#include "search/factory.h"
#include "search/multi/hypervolume.h"

namespace sift::bench {
namespace {

constexpr int kDims = 10;
constexpr std::array<int, 2> kBudgets = {100, 200};

using Objectives = std::array<double, 2>;  // both minimized

struct Problem {
  std::string name;
  SearchSpace space;
  std::function<Objectives(const Params&)> f;
  Objectives reference;  // bounds every value the problem takes
};

// The unit cube's coordinates in order.
std::vector<double> Coordinates(const Params& p, int dims) {
  std::vector<double> x;
  for (int i = 0; i < dims; ++i) x.push_back(Get(p, "x" + std::to_string(i)));
  return x;
}

double G(const std::vector<double>& x) {
  double s = 0;
  for (size_t i = 1; i < x.size(); ++i) s += x[i];
  return 1 + 9 * s / static_cast<double>(x.size() - 1);
}

Objectives Zdt1(double x0, double g) { return {x0, g * (1 - std::sqrt(x0 / g))}; }

SearchSpace UnitCube(int dims) {
  std::vector<ParamSpec> params;
  for (int i = 0; i < dims; ++i) params.push_back(Float("x" + std::to_string(i), 0, 1));
  return SearchSpace(params);
}

// ZDT1 whose last two variables are an integer k in 0..9 (k / 9 in g) and a categorical c
// (a, b, c: 0, 0.5, 1 in g), as a model's layer count and optimizer would be; same fronts and
// reference as ZDT1, optimum at k = 0 and c = a.
Problem MixedZdt1() {
  std::vector<ParamSpec> params = UnitCube(kDims - 2).params();
  params.push_back(Int("k", 0, 9));
  params.push_back(AbcChoice());
  return {"zdt1_mixed",
          SearchSpace(params),
          [](const Params& p) {
            std::vector<double> x = Coordinates(p, kDims - 2);
            const std::string& cat = std::get<std::string>(p.at("c"));
            x.push_back(Get(p, "k") / 9);
            x.push_back(cat == "a" ? 0.0 : cat == "b" ? 0.5 : 1.0);
            return Zdt1(x[0], G(x));
          },
          {1.1, 11.0}};
}

std::vector<Problem> Problems() {
  const SearchSpace cube = UnitCube(kDims);
  return {
      {"zdt1",
       cube,
       [](const Params& p) {
         const auto x = Coordinates(p, kDims);
         return Zdt1(x[0], G(x));
       },
       {1.1, 11.0}},
      {"zdt2",
       cube,
       [](const Params& p) {
         const auto x = Coordinates(p, kDims);
         const double g = G(x);
         return Objectives{x[0], g * (1 - (x[0] / g) * (x[0] / g))};
       },
       {1.1, 11.0}},
      {"dtlz2",
       cube,
       [](const Params& p) {
         const auto x = Coordinates(p, kDims);
         double g = 0;
         for (size_t i = 1; i < x.size(); ++i) g += (x[i] - 0.5) * (x[i] - 0.5);
         return Objectives{(1 + g) * std::cos(x[0] * M_PI / 2),
                           (1 + g) * std::sin(x[0] * M_PI / 2)};
       },
       {3.5, 3.5}},
      MixedZdt1(),
  };
}

// Hypervolume of minimized points: negated, larger is better, as search/multi wants them.
double Volume(const search::Points& minimized, const std::array<double, 2>& ref) {
  search::Points oriented;
  for (const auto& p : minimized) oriented.push_back({-p[0], -p[1]});
  return search::Hypervolume(oriented, {-ref[0], -ref[1]});
}

std::tuple<std::array<double, 2>, double> RunOne(const std::string& type,
                                                 const search::Options& options,
                                                 const Problem& problem, uint64_t seed) {
  const SearchSpace& space = problem.space;
  std::vector<std::string> errors;
  auto searcher = search::MakeSearcher(type, options, space, &errors, 2);
  if (!searcher) {
    std::fprintf(stderr, "%s: %s\n", type.c_str(), errors.at(0).c_str());
    std::exit(2);
  }
  search::StudyView study;
  study.space = &space;
  study.seed = seed;
  study.objectives = {{"f1", false}, {"f2", false}};
  study.objective = study.objectives[0];
  search::Points seen;
  std::array<double, 2> volume{};
  const double t0 = NowMs();
  for (int i = 0; i < kBudgets.back(); ++i) {
    search::TrialView t;
    t.number = i;
    t.params = searcher->Suggest(study, 1)[0];
    t.state = search::TrialState::kCompleted;
    const auto f = problem.f(t.params);
    t.values[1] = f[0];
    t.more_values = {search::CurveValues{{1, f[1]}}};
    study.trials.push_back(t);
    seen.push_back({f[0], f[1]});
    for (size_t b = 0; b < kBudgets.size(); ++b) {
      if (i + 1 == kBudgets[b]) volume[b] = Volume(seen, problem.reference);
    }
  }
  return {volume, (NowMs() - t0) / 1e3};
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) {
  using namespace sift::bench;
  PrintMachine();
  const auto ref = ReadReference(argc > 1 ? argv[1] : nullptr);
  if (ref.count("info.optuna"))
    std::printf("reference: Optuna %s\n", ref.at("info.optuna").c_str());
  const int seeds = argc > 2 ? std::stoi(argv[2]) : 10;
  const auto searchers = ParseSearchers(argc > 3 ? argv[3] : "random,tpe,gp,nsga2");
  const uint64_t first = argc > 4 ? std::stoull(argv[4]) : 0;
  std::printf("\n## Median hypervolume over %d seeds from %llu (higher is better)\n\n", seeds,
              static_cast<unsigned long long>(first));
  std::printf("| problem | searcher | @%d | @%d | seconds per run |\n|---|---|---|---|---|\n",
              kBudgets[0], kBudgets[1]);
  for (const Problem& problem : Problems()) {
    for (const auto& [label, type, options] : searchers) {
      std::vector<std::vector<double>> by_budget(kBudgets.size());
      std::vector<double> secs;
      for (uint64_t seed = first; seed < first + static_cast<uint64_t>(seeds); ++seed) {
        const auto [volume, seconds] = RunOne(type, options, problem, seed);
        for (size_t b = 0; b < kBudgets.size(); ++b) by_budget[b].push_back(volume[b]);
        secs.push_back(seconds);
      }
      std::printf("| %s | %s | %.4f | %.4f | %.2f |\n", problem.name.c_str(), label.c_str(),
                  Median(by_budget[0]), Median(by_budget[1]), Median(secs));
      std::fflush(stdout);
    }
    std::array<double, 2> best{0, 0};
    bool any = false;
    for (const char* o :
         {"optuna_tpe", "optuna_tpe_multivariate", "optuna_motpe", "optuna_nsga2"}) {
      const std::string key = "mo." + problem.name + "." + o + ".";
      if (!ref.count(key + "100") || !ref.count(key + "200")) continue;
      std::printf("| %s | %s (reference) | %s | %s | - |\n", problem.name.c_str(), o,
                  ref.at(key + "100").c_str(), ref.at(key + "200").c_str());
      any = true;
      best[0] = std::max(best[0], std::stod(ref.at(key + "100")));
      best[1] = std::max(best[1], std::stod(ref.at(key + "200")));
    }
    if (any) {
      std::printf("| %s | best Optuna (reference) | %.6g | %.6g | - |\n", problem.name.c_str(),
                  best[0], best[1]);
    }
  }
  return 0;
}

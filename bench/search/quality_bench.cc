// Median simple regret after 25, 50 and 100 evaluations over 10 seeds, on Branin, Hartmann-6 and
// a mixed space, for each searcher; Optuna 3.1 (same problems and seeds) printed alongside.
// Usage: search_quality_bench [optuna_quality.txt] [searcher[:key=int]...,...] [long|B1,B2,B3]
// `long`: after 100, 250 and 500 evaluations instead (where the bounds on TPE's and BOHB's
// models bind; e.g. `tpe,tpe:max_above=0` compares the bounded model with the exact one).
#include <cstdio>
#include <cstring>
#include <sstream>
#include <tuple>

#include "bench/search/bench_util.h"
#include "bench/search/test_functions.h"
#include "search/factory.h"

namespace sift::bench {
namespace {

constexpr int kSeeds = 10;
std::vector<int> budgets = {25, 50, 100};

struct Run {
  std::vector<double> regret_at;  // per budget
  double seconds;
};

Run RunOne(const std::string& type, const search::Options& options, const TestFunction& fn,
           uint64_t seed) {
  std::vector<std::string> errors;
  auto searcher = search::MakeSearcher(type, options, fn.space, &errors);
  search::StudyView study;
  study.space = &fn.space;
  study.seed = seed;
  study.objective.maximize = false;
  double best = 1e300;
  Run r;
  const double t0 = NowMs();
  for (int i = 0; i < budgets.back(); ++i) {
    search::TrialView t;
    t.number = i;
    t.params = searcher->Suggest(study, 1)[0];
    t.state = search::TrialState::kCompleted;
    t.values[1] = fn.f(t.params);
    // A synthetic price for the cost-aware variant: larger x1 costs more (up to 3x).
    t.cost_dollars = 0.01 * (1.0 + 2.0 * fn.space.ToUnit(fn.space.params()[0],
                                                         t.params.at(fn.space.params()[0].name)));
    best = std::min(best, t.values[1]);
    study.trials.push_back(t);
    for (int b : budgets) {
      if (i + 1 == b) r.regret_at.push_back(best - fn.optimum);
    }
  }
  r.seconds = (NowMs() - t0) / 1e3;
  return r;
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) {
  using namespace sift::bench;
  PrintMachine();
  const auto ref = ReadReference(argc > 1 ? argv[1] : nullptr);
  if (ref.count("info.optuna")) std::printf("reference: Optuna %s\n", ref.at("info.optuna").c_str());
  // label, type, options
  std::vector<std::tuple<std::string, std::string, sift::search::Options>> searchers = {
      {"random", "random", {}}, {"sobol", "sobol", {}}, {"tpe", "tpe", {}}, {"gp", "gp", {}},
      {"bohb", "bohb", {}}};
  if (argc > 2 && std::strcmp(argv[2], "all") != 0) {
    searchers.clear();
    std::stringstream list(argv[2]);
    for (std::string s; std::getline(list, s, ',');) {
      // type[:key=int[:key=int...]]
      std::stringstream parts(s);
      std::string type, kv;
      std::getline(parts, type, ':');
      sift::search::Options options;
      while (std::getline(parts, kv, ':')) {
        const size_t eq = kv.find('=');
        options[kv.substr(0, eq)] = static_cast<int64_t>(std::stoll(kv.substr(eq + 1)));
      }
      searchers.push_back({s, type, options});
    }
  }
  if (argc > 3 && std::strcmp(argv[3], "long") == 0) {
    budgets = {100, 250, 500};
  } else if (argc > 3) {  // three budgets, e.g. 100,150,250
    budgets.clear();
    std::stringstream list(argv[3]);
    for (std::string b; std::getline(list, b, ',');) budgets.push_back(std::stoi(b));
    if (budgets.size() != 3) return 2;
  }
  std::printf("\n## Median simple regret over %d seeds (lower is better)\n\n", kSeeds);
  std::printf("| function | searcher | @%d | @%d | @%d | seconds per run |\n"
              "|---|---|---|---|---|---|\n", budgets[0], budgets[1], budgets[2]);
  for (const TestFunction& fn : QualityFunctions()) {
    for (const auto& [label, type, options] : searchers) {
      std::vector<std::vector<double>> by_budget(3);
      std::vector<double> secs;
      for (uint64_t seed = 0; seed < kSeeds; ++seed) {
        const Run r = RunOne(type, options, fn, seed);
        for (int b = 0; b < 3; ++b) by_budget[b].push_back(r.regret_at[b]);
        secs.push_back(r.seconds);
      }
      std::printf("| %s | %s | %.4g | %.4g | %.4g | %.2f |\n", fn.name.c_str(), label.c_str(),
                  Median(by_budget[0]), Median(by_budget[1]), Median(by_budget[2]), Median(secs));
      std::fflush(stdout);
    }
    for (const char* o : {"optuna_random", "optuna_tpe", "optuna_tpe_logpdf_fixed"}) {
      const std::string key = "quality." + fn.name + "." + o + ".";
      if (!ref.count(key + "25") || budgets[0] != 25) continue;
      std::printf("| %s | %s (reference) | %s | %s | %s | - |\n", fn.name.c_str(), o,
                  ref.at(key + "25").c_str(), ref.at(key + "50").c_str(),
                  ref.at(key + "100").c_str());
    }
  }
  return 0;
}

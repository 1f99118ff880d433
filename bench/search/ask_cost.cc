// CPU time of one Suggest in a steady study, for comparing two builds of search/ alternately on a
// shared machine (the thread's CPU clock leaves out time the scheduler gave other processes).
// The study is decision_bench.cc's (the coordinator benchmark's four parameters, ten epochs of
// the load generator's curve); each suggestion is told as a finished trial before the next ask.
// Also prints a digest of every suggestion, so that two builds can be checked to suggest the same.
// With OBJECTIVES 2 the study also minimizes a trial-specific rising cost (dollars per epoch), with
// 3 a trial-specific latency too.
// Usage: search_ask_cost TYPE TRIALS ASKS [OBJECTIVES]   e.g. search_ask_cost tpe 10000 2000
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/search/bench_util.h"
#include "search/factory.h"

namespace {

using namespace sift::search;

double ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

SearchSpace CoordinatorBenchSpace() {
  const ParamSpec specs[] = {{"lr", ParamType::kFloat, 1e-4, 1e-1, Scale::kLog, {}, {}},
                             {"hidden", ParamType::kInt, 32, 512, Scale::kLog, {}, {}},
                             {"dropout", ParamType::kFloat, 0, 0.5, Scale::kLinear, {}, {}},
                             {"optimizer",
                              ParamType::kCategorical,
                              0,
                              0,
                              Scale::kLinear,
                              {std::string("sgd"), std::string("adam")},
                              {}}};
  return SearchSpace(std::vector<ParamSpec>(std::begin(specs), std::end(specs)));
}

// Appends a COMPLETED trial with `params` and ten epochs of a trial-specific rising curve.
void Tell(StudyView& study, Params params) {
  TrialView t;
  t.number = static_cast<int64_t>(study.trials.size());
  t.params = std::move(params);
  t.state = TrialState::kCompleted;
  const double rate =
      0.05 + static_cast<double>(Mix64(static_cast<uint64_t>(t.number)) % 1000) / 1e4;
  for (int64_t e = 1; e <= 10; ++e) t.values[e] = 1.0 - 0.9 / (1.0 + rate * static_cast<double>(e));
  if (study.objectives.size() > 1) {
    const double price =
        0.01 + static_cast<double>(Mix64(~static_cast<uint64_t>(t.number)) % 1000) / 1e5;
    t.more_values.resize(study.objectives.size() - 1);
    for (int64_t e = 1; e <= 10; ++e) t.more_values[0][e] = price * static_cast<double>(e);
  }
  if (study.objectives.size() > 2) {
    const double ms =
        1 + static_cast<double>(Mix64(3 * static_cast<uint64_t>(t.number)) % 1000) / 100;
    for (int64_t e = 1; e <= 10; ++e) t.more_values[1][e] = ms;
  }
  study.trials.push_back(std::move(t));
}

// The exact values (a double's bits, not its text), names included.
uint64_t Digest(const Params& params) {
  uint64_t h = 0;
  for (const auto& [name, value] : params) {
    for (char c : name) h = Mix64(h ^ static_cast<unsigned char>(c));
    if (const auto* d = std::get_if<double>(&value)) {
      uint64_t bits;
      std::memcpy(&bits, d, sizeof(bits));
      h = Mix64(h ^ bits);
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      h = Mix64(h ^ static_cast<uint64_t>(*i));
    } else {
      for (char c : std::get<std::string>(value)) h = Mix64(h ^ static_cast<unsigned char>(c));
    }
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s TYPE TRIALS ASKS [OBJECTIVES]\n", argv[0]);
    return 2;
  }
  const std::string type = argv[1];
  const int trials = std::atoi(argv[2]), asks = std::atoi(argv[3]);
  const size_t objectives = argc == 5 ? static_cast<size_t>(std::atoi(argv[4])) : 1;
  if (objectives < 1 || objectives > 3) {
    std::fprintf(stderr, "OBJECTIVES: 1, 2 or 3, not %s\n", argv[4]);
    return 2;
  }
  const SearchSpace space = CoordinatorBenchSpace();
  StudyView study;
  study.space = &space;
  study.seed = 1;
  study.max_resource = 10;
  if (objectives > 1) {
    study.objectives = {{"val_accuracy", true}, {"dollars", false}, {"inference_ms", false}};
    study.objectives.resize(objectives);
  }
  Rng rng(7);
  for (int i = 0; i < trials; ++i) Tell(study, space.Sample(rng));
  std::vector<std::string> errors;
  auto searcher = MakeSearcher(type, {}, space, &errors, objectives);
  if (!searcher) {
    std::fprintf(stderr, "%s\n", errors.empty() ? "unknown searcher" : errors[0].c_str());
    return 2;
  }
  searcher->Suggest(study, 1);  // cold: the caches fill
  std::vector<double> us;
  uint64_t digest = 0;
  for (int i = 0; i < asks; ++i) {
    const double t0 = ThreadCpuUs();
    std::vector<Params> p = searcher->Suggest(study, 1);
    us.push_back(ThreadCpuUs() - t0);
    digest = Mix64(digest ^ Digest(p[0]));
    Tell(study, std::move(p[0]));
  }
  double total = 0;
  for (double u : us) total += u;
  std::printf(
      "%s%s after %d trials: median %.1f us, mean %.1f us CPU per ask (%d asks); "
      "suggestions digest %016llx\n",
      type.c_str(),
      objectives == 1   ? ""
      : objectives == 2 ? " (2 objectives)"
                        : " (3 objectives)",
      trials, sift::bench::Median(us), total / asks, asks, static_cast<unsigned long long>(digest));
  return 0;
}

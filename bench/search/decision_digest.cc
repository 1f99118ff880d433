// One hash of every decision (action and reason) and every promotion the multi-objective
// schedulers make on random interleaved studies: the same digest from two builds means the same
// decisions, bit for bit, however differently they are computed.
// Usage: search_decision_digest [TRIALS]   (default 2000)
// Studies: MO-ASHA (stopping and promotion), MO-Hyperband and the MO median rule; 2 and 3
// objectives; values on a coarse grid (ties) or continuous, sometimes NaN; one constraint,
// sometimes violated, sometimes not reported; up to 8 trials running; seeds 1-3.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/factory.h"
#include "search/rng.h"
#include "tests/search/scheduler_sim.h"

namespace sift::bench {
namespace {

using search::Action;
using search::Decision;
using search::TrialState;
using search::TrialView;

constexpr int64_t kEpochs = 9;

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void Add(const std::string& s) {
    for (unsigned char c : s) Byte(c);
    Byte(0xff);  // a separator, so "ab" + "c" differs from "a" + "bc"
  }
  void Byte(unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  }
};

struct Counts {
  int decisions = 0, stops = 0, pauses = 0, promotions = 0;
};

uint64_t RunStudy(search::Scheduler& s, size_t objectives, uint64_t seed, int trials, Counts* c) {
  search::StudyView study;
  study.objectives = {{"val_accuracy", true}, {"dollars", false}, {"latency", false}};
  study.objectives.resize(objectives);
  study.objective = study.objectives[0];
  study.constraints = {{"size", 1.0, true}};
  study.max_resource = kEpochs;
  search::Rng rng(seed);
  Fnv h;
  std::vector<int64_t> running;
  while (static_cast<int>(study.trials.size()) < trials || !running.empty()) {
    if (running.size() < 8 && static_cast<int>(study.trials.size()) < trials) {
      const std::optional<int64_t> p = s.NextPromotion(study);
      h.Add(p ? std::to_string(*p) : "-");
      if (p) {
        search::testing::RunAgain(study, running, *p);
        ++c->promotions;
      } else {
        search::testing::StartNew(study, running);
      }
      continue;
    }
    const size_t pick = rng.Below(running.size());
    TrialView& t = study.trials[static_cast<size_t>(running[pick])];
    const int64_t e = t.LastResource() + 1;
    const bool coarse = rng.Below(2) == 0;
    auto value = [&]() -> double {
      if (rng.Below(40) == 0) return NAN;
      return coarse ? static_cast<double>(rng.Below(8)) : rng.Uniform();
    };
    t.values[e] = value();
    t.more_values.resize(objectives - 1);
    for (auto& curve : t.more_values) curve[e] = value();
    t.constraint_values.resize(1);
    if (rng.Below(3) != 0) t.constraint_values[0][e] = rng.Below(6) == 0 ? 1.5 : 0.5;
    const Decision d = s.OnReport(study, t);
    h.Add(std::to_string(static_cast<int>(d.action)) + d.reason);
    ++c->decisions;
    c->stops += d.action == Action::kStop;
    c->pauses += d.action == Action::kPause;
    if (d.action != Action::kContinue || e == kEpochs) {
      t.state = d.action == Action::kStop    ? TrialState::kStopped
                : d.action == Action::kPause ? TrialState::kPaused
                                             : TrialState::kCompleted;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  return h.h;
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) {
  using namespace sift;
  const int trials = argc > 1 ? std::atoi(argv[1]) : 2000;
  struct Case {
    const char* label;
    const char* type;
    search::Options options;
  };
  const std::vector<Case> cases = {
      {"mo asha (stopping)", "asha", {}},
      {"mo asha (promotion)", "asha", {{"variant", std::string("promotion")}}},
      {"mo hyperband (promotion)", "hyperband", {{"variant", std::string("promotion")}}},
      {"mo median", "median", {}},
  };
  bench::Fnv all;
  for (const Case& c : cases) {
    for (size_t objectives : {2u, 3u}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        std::vector<std::string> errors;
        auto s =
            search::MakeScheduler(c.type, c.options, {bench::kEpochs, true, objectives}, &errors);
        if (!s) {
          std::fprintf(stderr, "%s: %s\n", c.type, errors.empty() ? "?" : errors[0].c_str());
          return 1;
        }
        bench::Counts n;
        const uint64_t h = bench::RunStudy(*s, objectives, seed, trials, &n);
        std::printf(
            "%-24s %zu objectives, seed %d: %d decisions, %d stops, %d pauses, "
            "%d promotions, digest %016llx\n",
            c.label, objectives, static_cast<int>(seed), n.decisions, n.stops, n.pauses,
            n.promotions, static_cast<unsigned long long>(h));
        all.Add(std::to_string(h));
      }
    }
  }
  std::printf("all: %016llx\n", static_cast<unsigned long long>(all.h));
  return 0;
}

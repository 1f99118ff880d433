// Replays learning curves recorded from real Sift runs (bench/search/record_curves.py) through
// the schedulers, as the coordinator would run them: W workers, promotions asked before new
// trials, each epoch costing the seconds it took when it was recorded. Issue 27, section 1:
// CPU time to reach the best validation score ASHA reaches, and how often one of the five best
// trials (by value at max epochs, over the whole recording) was stopped.
//
//   search_curve_replay bench/search/curves/*.csv        [SEEDS=10] [WORKERS=4] env overrides
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "search/factory.h"
#include "search/rng.h"
#include "tests/search/scheduler_sim.h"

namespace sift::search {
namespace {

struct Epoch {
  double value, seconds;
};
struct Recording {
  std::string name, metric;
  bool maximize = true;
  int64_t horizon = 0;
  std::vector<std::vector<Epoch>> trials;  // by trial, epochs 1..n
};

Recording Load(const std::string& path) {
  Recording r;
  r.name = path.substr(path.find_last_of('/') + 1);
  r.name = r.name.substr(0, r.name.find('.'));
  std::ifstream in(path);
  std::string line, direction;
  std::getline(in, line);  // "# METRIC DIRECTION"
  std::istringstream(line.substr(1)) >> r.metric >> direction;
  r.maximize = direction == "maximize";
  std::getline(in, line);  // header
  std::map<int64_t, std::vector<Epoch>> by_trial;
  while (std::getline(in, line)) {
    int64_t trial = 0, epoch = 0;
    double value = 0, seconds = 0;
    if (std::sscanf(line.c_str(), "%ld,%ld,%lf,%lf", &trial, &epoch, &value, &seconds) != 4) {
      std::fprintf(stderr, "%s: bad line '%s'\n", path.c_str(), line.c_str());
      std::exit(1);
    }
    auto& c = by_trial[trial];
    if (epoch != static_cast<int64_t>(c.size()) + 1) {
      std::fprintf(stderr, "%s: trial %ld epoch %ld out of order\n", path.c_str(), trial, epoch);
      std::exit(1);
    }
    c.push_back({value, seconds});
    r.horizon = std::max(r.horizon, epoch);
  }
  for (auto& [n, c] : by_trial) r.trials.push_back(std::move(c));
  return r;
}

struct Outcome {
  double cpu = 0;      // seconds of every epoch trained
  int64_t epochs = 0;  // epochs trained
  struct Best {
    double cpu;
    int64_t epochs;
    double score;
  };
  std::vector<Best> best;     // the best score so far, each time it improved
  std::vector<bool> stopped;  // by recorded trial: ended early by the scheduler
  const Best* To(double score) const {
    for (const Best& b : best) {
      if (b.score >= score) return &b;
    }
    return nullptr;
  }
};

// The order in which a replay starts the recorded trials: study trial i is recorded trial
// order[i].
std::vector<int64_t> Order(const Recording& rec, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(rec.trials.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(rng.Below(static_cast<uint64_t>(i) + 1))]);
  }
  return order;
}

// The coordinator's loop over recorded curves (tests/search/scheduler_sim.h, with real curves):
// trials start in a seeded order; a non-finite value fails the trial as the worker would.
Outcome Replay(const Recording& rec, Scheduler& s, uint64_t seed, int workers) {
  const int64_t n = static_cast<int64_t>(rec.trials.size());
  const std::vector<int64_t> order = Order(rec, seed);
  Outcome out;
  out.stopped.assign(static_cast<size_t>(n), false);
  StudyView study;
  study.objective.maximize = rec.maximize;
  study.max_resource = rec.horizon;
  std::vector<int64_t> running;
  double best = -std::numeric_limits<double>::infinity();
  while (true) {
    while (static_cast<int>(running.size()) < workers) {
      if (auto p = s.NextPromotion(study)) {
        testing::RunAgain(study, running, *p);
      } else if (static_cast<int64_t>(study.trials.size()) < n) {
        testing::StartNew(study, running);
      } else {
        break;
      }
    }
    if (running.empty()) break;
    std::vector<int64_t> still;
    for (int64_t number : running) {
      TrialView& t = study.trials[static_cast<size_t>(number)];
      const auto& curve = rec.trials[static_cast<size_t>(order[static_cast<size_t>(number)])];
      const int64_t e = t.LastResource() + 1;
      const Epoch& ep = curve[static_cast<size_t>(e - 1)];
      out.cpu += ep.seconds;
      ++out.epochs;
      if (!std::isfinite(ep.value)) {
        t.state = TrialState::kFailed;
        continue;
      }
      t.values[e] = ep.value;
      const double score = study.Score(ep.value);
      if (score > best) {
        best = score;
        out.best.push_back({out.cpu, out.epochs, best});
      }
      const Decision d = s.OnReport(study, t);
      if (d.action == Action::kStop) {
        t.state = TrialState::kStopped;
      } else if (d.action == Action::kPause) {
        t.state = TrialState::kPaused;
      } else if (e >= rec.horizon || e >= static_cast<int64_t>(curve.size())) {
        t.state = e >= rec.horizon ? TrialState::kCompleted : TrialState::kFailed;
      } else {
        still.push_back(number);
      }
    }
    running = still;
  }
  for (const TrialView& t : study.trials) {
    const bool early = t.state == TrialState::kStopped || t.state == TrialState::kPaused;
    out.stopped[static_cast<size_t>(order[static_cast<size_t>(t.number)])] = early;
  }
  return out;
}

// A lower bound on the epochs, and on the CPU seconds, any stopping rule trains in Replay before
// the target (in scores) is first reached, when no trial may be stopped before `min_epochs`.
// Say the trial at place p of the order is the first to reach it, at its epoch r. It starts only
// once the p trials before it have started, and at most workers - 1 of them can still be running
// then, so at least p - workers + 1 have ended, each after `min_epochs` epochs at least (fewer
// only if it failed). Then it trains r epochs, one per round of the replay, and in each round but
// the last the other workers train one epoch each, as long as there are trials to run.
// In seconds: each of the p trials before it has trained its first epoch by then (in an earlier
// round, or earlier in the same round: running trials train in the order they started); at least
// p - workers + 1 of them also trained their next epochs up to `min_epochs` before it started;
// it trains its own r epochs; and from its second round to its last but one the other workers
// train epochs that none of those can be (they come after its first round), priced at the
// cheapest recorded. The parts are disjoint sets of epochs, so their sum is a floor. The least
// of that over the trials that reach the target is the bound: no rule, however it decides,
// trains fewer epochs or spends fewer seconds.
struct Floor {
  double epochs = std::numeric_limits<double>::infinity();
  double cpu = std::numeric_limits<double>::infinity();
};

Floor Bound(const Recording& rec, double target, int64_t min_epochs, uint64_t seed, int workers) {
  const std::vector<int64_t> order = Order(rec, seed);
  const auto w = static_cast<int64_t>(workers);
  Floor least;
  std::vector<int64_t> ends;        // per place: the epochs the trial takes at least before it ends
  std::vector<double> first, rest;  // and their seconds: the first epoch's, the others'
  std::vector<double> cheapest;     // every epoch's seconds, cheapest first, summed
  for (const auto& curve : rec.trials) {
    for (const Epoch& e : curve) cheapest.push_back(e.seconds);
  }
  std::sort(cheapest.begin(), cheapest.end());
  for (size_t i = 1; i < cheapest.size(); ++i) cheapest[i] += cheapest[i - 1];
  for (int64_t number : order) {
    const auto& curve = rec.trials[static_cast<size_t>(number)];
    int64_t e = 0;
    while (e < min_epochs && e < static_cast<int64_t>(curve.size()) &&
           std::isfinite(curve[static_cast<size_t>(e)].value)) {
      ++e;
    }
    ends.push_back(std::min<int64_t>(e + 1, std::min<int64_t>(min_epochs, curve.size())));
    first.push_back(curve[0].seconds);
    double seconds = 0;
    for (int64_t i = 1; i < ends.back(); ++i) seconds += curve[static_cast<size_t>(i)].seconds;
    rest.push_back(seconds);
  }
  double firsts = 0;  // of the trials before place p
  for (size_t p = 0; p < order.size(); firsts += first[p], ++p) {
    const auto& curve = rec.trials[static_cast<size_t>(order[p])];
    int64_t r = 0;
    double own = 0;
    for (size_t e = 0; e < curve.size() && std::isfinite(curve[e].value); ++e) {
      own += curve[e].seconds;
      if ((rec.maximize ? curve[e].value : -curve[e].value) >= target) {
        r = static_cast<int64_t>(e) + 1;
        break;
      }
    }
    if (r == 0) continue;
    // The p - workers + 1 cheapest of the trials before it ended before it started.
    const auto cut = static_cast<std::ptrdiff_t>(p);
    std::vector<int64_t> before(ends.begin(), ends.begin() + cut);
    std::vector<double> before_rest(rest.begin(), rest.begin() + cut);
    std::sort(before.begin(), before.end());
    std::sort(before_rest.begin(), before_rest.end());
    int64_t ended = 0;
    double ended_rest = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(p) - w + 1; ++i) {
      ended += before[static_cast<size_t>(i)];
      ended_rest += before_rest[static_cast<size_t>(i)];
    }
    // The other workers while it runs, bounded by what the trials after it can take.
    int64_t after = 0;
    for (size_t q = p + 1; q < order.size(); ++q) after += ends[q];
    const int64_t others = std::min((w - 1) * (r - 1), after);
    const int64_t later = std::min((w - 1) * std::max<int64_t>(0, r - 2), after);
    const double others_cpu = later > 0 ? cheapest[static_cast<size_t>(later - 1)] : 0.0;
    least.epochs = std::min(least.epochs, static_cast<double>(ended + r + others));
    least.cpu = std::min(least.cpu, firsts + ended_rest + own + others_cpu);
  }
  return least;
}

// The five best trials by their value at max epochs over the whole recording, with every trial
// tied with the fifth (accuracy on a small table ties often: on wine 20-odd trials end at 1.0).
std::vector<int64_t> TopFive(const Recording& rec) {
  std::vector<std::pair<double, int64_t>> finals;
  for (size_t i = 0; i < rec.trials.size(); ++i) {
    const auto& c = rec.trials[i];
    if (static_cast<int64_t>(c.size()) < rec.horizon || !std::isfinite(c.back().value)) continue;
    finals.push_back({rec.maximize ? c.back().value : -c.back().value, static_cast<int64_t>(i)});
  }
  std::sort(finals.rbegin(), finals.rend());
  std::vector<int64_t> top;
  for (size_t i = 0; i < finals.size() && (i < 5 || finals[i].first == finals[4].first); ++i) {
    top.push_back(finals[i].second);
  }
  return top;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Variant {
  std::string label, type;
  Options options;
};

}  // namespace
}  // namespace sift::search

int main(int argc, char** argv) {
  using namespace sift::search;
  const int seeds = std::getenv("SEEDS") ? std::atoi(std::getenv("SEEDS")) : 10;
  const int workers = std::getenv("WORKERS") ? std::atoi(std::getenv("WORKERS")) : 4;
  const std::vector<Variant> variants = {
      {"fifo", "fifo", {}},
      {"asha", "asha", {}},
      {"asha, predict", "asha", {{"predict", true}}},
      {"median", "median", {}},
      {"curve", "curve", {}},
      {"curve, threshold 0.01", "curve", {{"threshold", 0.01}}},
      {"curve, k 3", "curve", {{"k", int64_t{3}}}},
      {"curve, bar reached", "curve", {{"bar", std::string("reached")}}},
      {"curve, bar reached, threshold 0.01",
       "curve",
       {{"bar", std::string("reached")}, {"threshold", 0.01}}},
  };
  std::printf("%d seeds (trial order), %d workers; medians over seeds\n\n", seeds, workers);
  std::printf(
      "| curves | scheduler | CPU s | epochs | to ASHA's best: CPU s | x ASHA | epochs | "
      "x ASHA | reached | top stopped |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int a = 1; a < argc; ++a) {
    const Recording rec = Load(argv[a]);
    const std::vector<int64_t> top = TopFive(rec);
    std::vector<std::vector<Outcome>> outcomes(variants.size());
    for (size_t v = 0; v < variants.size(); ++v) {
      for (int seed = 1; seed <= seeds; ++seed) {
        std::vector<std::string> errors;
        auto s = MakeScheduler(variants[v].type, variants[v].options, {rec.horizon, rec.maximize},
                               &errors);
        if (!s) {
          std::fprintf(stderr, "%s: %s\n", variants[v].label.c_str(), errors[0].c_str());
          return 1;
        }
        outcomes[v].push_back(Replay(rec, *s, static_cast<uint64_t>(seed), workers));
      }
    }
    const std::string label = rec.name + " (" + std::to_string(rec.trials.size()) + " x " +
                              std::to_string(rec.horizon) + ", " + rec.metric + "; top " +
                              std::to_string(top.size()) + ")";
    for (size_t v = 0; v < variants.size(); ++v) {
      std::vector<double> cpu, epochs, to, ratio, to_epochs, ratio_epochs;
      int reached = 0;
      double lost = 0;
      for (int seed = 0; seed < seeds; ++seed) {
        const Outcome& o = outcomes[v][static_cast<size_t>(seed)];
        const Outcome& asha = outcomes[1][static_cast<size_t>(seed)];
        const double target = asha.best.back().score;
        cpu.push_back(o.cpu);
        epochs.push_back(static_cast<double>(o.epochs));
        if (const auto* t = o.To(target)) {
          const auto* base = asha.To(target);
          ++reached;
          // Every rule here may stop from epoch 1 on: none may go under that floor.
          const Floor floor = Bound(rec, target, 1, static_cast<uint64_t>(seed + 1), workers);
          if (static_cast<double>(t->epochs) < floor.epochs || t->cpu < floor.cpu * (1 - 1e-9)) {
            std::fprintf(stderr,
                         "%s, %s, order %d: %ld epochs and %.3f s, under the floor %.0f, %.3f\n",
                         rec.name.c_str(), variants[v].label.c_str(), seed + 1,
                         static_cast<long>(t->epochs), t->cpu, floor.epochs, floor.cpu);
            return 1;
          }
          to.push_back(t->cpu);
          ratio.push_back(t->cpu / base->cpu);
          to_epochs.push_back(static_cast<double>(t->epochs));
          ratio_epochs.push_back(static_cast<double>(t->epochs) /
                                 static_cast<double>(base->epochs));
        }
        for (int64_t i : top) lost += o.stopped[static_cast<size_t>(i)];
      }
      const auto cell = [](const std::vector<double>& x, const char* format) {
        char buf[32] = "-";
        if (!x.empty()) std::snprintf(buf, sizeof(buf), format, Median(x));
        return std::string(buf);
      };
      std::printf("| %s | %s | %.1f | %.0f | %s | %s | %s | %s | %d/%d | %.1f |\n",
                  v == 0 ? label.c_str() : "", variants[v].label.c_str(), Median(cpu),
                  Median(epochs), cell(to, "%.2f").c_str(), cell(ratio, "%.2f").c_str(),
                  cell(to_epochs, "%.0f").c_str(), cell(ratio_epochs, "%.2f").c_str(), reached,
                  seeds, lost / seeds);
    }
    // What no stopping rule can beat in these orders, in seconds and in epochs, from epoch 1
    // and from epoch 3 (the first a curve fit has its three points at).
    for (int64_t from : {int64_t{1}, int64_t{3}}) {
      std::vector<double> to, ratio, to_cpu, ratio_cpu;
      for (int seed = 0; seed < seeds; ++seed) {
        const Outcome& asha = outcomes[1][static_cast<size_t>(seed)];
        const auto* base = asha.To(asha.best.back().score);
        const Floor b = Bound(rec, base->score, from, static_cast<uint64_t>(seed + 1), workers);
        to.push_back(b.epochs);
        ratio.push_back(b.epochs / static_cast<double>(base->epochs));
        to_cpu.push_back(b.cpu);
        ratio_cpu.push_back(b.cpu / base->cpu);
      }
      std::printf(
          "|  | bound: any rule stopping from epoch %ld | - | - | %.2f | %.2f | %.0f | %.2f | - | "
          "- |\n",
          static_cast<long>(from), Median(to_cpu), Median(ratio_cpu), Median(to), Median(ratio));
    }
  }
  return 0;
}

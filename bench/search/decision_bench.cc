// Cost of one decision at the 100th trial against the 10,000th, for every searcher and scheduler,
// on the coordinator benchmark's study (bench/coordinator/throughput.sh: 4 parameters, 10 epochs).
// Issue 14 asks for the 10,000th within 1.5x of the 100th.
// Usage: search_decision_bench [TRIALS] [schedulers|searchers|NAME,...]   (default: all)
// The "mo ..." schedulers are the multi-objective ones, on the same study with a second
// objective (the trial's dollars, minimized: epochs times a trial-specific rate).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/search/bench_util.h"
#include "search/asha_scheduler.h"
#include "search/factory.h"
#include "search/multi/mo_asha_scheduler.h"
#include "search/rng.h"

namespace sift::bench {
namespace {

using search::ParamSpec;
using search::Rng;
using search::StudyView;
using search::TrialState;
using search::TrialView;

constexpr int64_t kEpochs = 10;
constexpr int kWindow = 50;  // trials timed at each point

// Reading the clock twice around a call costs 20-40 ns here (steady_clock through the vDSO on
// the TSC), as much as a whole CONTINUE: left in, that constant pulls every ratio towards 1.
// So each timed call is followed by an empty interval timed the same way, and a figure is the
// call's less the empty interval's.
//
// And the clock moves in steps of about 10 ns on this VM (back-to-back readings differ by 20,
// 30 or 40 ns, rarely anything between), so the median of calls that take 20-70 ns is one of a
// few step values and a ratio of two such medians jumps by 20-50% with one step. The figure is
// therefore the interquartile mean (the mean of the middle half of the samples): it resolves
// below one step because the call's start falls anywhere within a step, and it ignores the
// outliers (a preemption, a page fault) as the median does.
double InterquartileMean(std::vector<double> v) {
  if (v.empty()) return NAN;
  if (v.size() < 4) return Median(v);  // no middle half to take: not one outlier in the mean
  std::sort(v.begin(), v.end());
  const size_t lo = v.size() / 4, hi = v.size() - v.size() / 4;
  double sum = 0;
  for (size_t i = lo; i < hi; ++i) sum += v[i];
  return sum / static_cast<double>(hi - lo);
}

template <class F>
auto Timed(F&& f, double& call_us, double& empty_us) {
  const double t0 = NowMs();
  auto result = f();
  const double t1 = NowMs();
  const double e0 = NowMs();
  empty_us = (NowMs() - e0) * 1e3;
  call_us = (t1 - t0) * 1e3;
  return result;
}

struct Timings {
  std::vector<double> calls, empty;
  template <class F>
  auto Time(F&& f) {
    double call_us, empty_us;
    auto result = Timed(f, call_us, empty_us);
    Add(call_us, empty_us);
    return result;
  }
  void Add(double call_us, double empty_us) {
    calls.push_back(call_us);
    empty.push_back(empty_us);
  }
  // Microseconds less the clock's own (interquartile means); NaN when nothing was timed.
  double NetUs() const { return InterquartileMean(calls) - InterquartileMean(empty); }
  double TimerUs() const { return InterquartileMean(empty); }
};

search::SearchSpace LoadgenSpace() {
  using search::ParamType;
  using search::Scale;
  ParamSpec lr{"lr", ParamType::kFloat, 1e-4, 1e-1, Scale::kLog, {}, {}};
  ParamSpec hidden{"hidden", ParamType::kInt, 32, 512, Scale::kLog, {}, {}};
  ParamSpec dropout{"dropout", ParamType::kFloat, 0, 0.5, Scale::kLinear, {}, {}};
  ParamSpec optimizer{
      "optimizer", ParamType::kCategorical, 0,
      0,           Scale::kLinear,          {std::string("sgd"), std::string("adam")},
      {}};
  return search::SearchSpace({lr, hidden, dropout, optimizer});
}

// The loadgen's made-up curve: rises with epochs at a trial-specific rate.
double Curve(uint64_t number, int64_t epoch) {
  const double rate = 0.05 + static_cast<double>(search::Mix64(number) % 1000) / 1e4;
  return 1.0 - 0.9 / (1.0 + rate * static_cast<double>(epoch));
}

// With `paused`, nine trials in ten wait paused after their first epoch instead, as in a
// promotion ASHA or Hyperband study, where most trials are never promoted.
TrialView FinishedTrial(const search::SearchSpace& space, int64_t number, Rng& rng,
                        bool paused = false) {
  TrialView t;
  t.number = number;
  t.params = space.Sample(rng);
  const bool waits = paused && number % 10 != 0;
  t.state = waits ? TrialState::kPaused : TrialState::kCompleted;
  for (int64_t e = 1; e <= (waits ? 1 : kEpochs); ++e) {
    t.values[e] = Curve(static_cast<uint64_t>(number), e);
  }
  return t;
}

// A study with `at` finished trials and its searcher, asked one configuration at a time (each
// suggestion is then told as a finished trial, as a running study sees it).
struct AskedStudy {
  AskedStudy(const std::string& type, const search::SearchSpace& space, int at, bool paused)
      : rng(7), paused(paused) {
    study.space = &space;
    study.seed = 1;
    study.max_resource = kEpochs;
    for (int i = 0; i < at; ++i) study.trials.push_back(FinishedTrial(space, i, rng, paused));
    std::vector<std::string> errors;
    searcher = search::MakeSearcher(type, {}, space, &errors);
    searcher->Suggest(study, 1);  // cold: caches fill, as on the coordinator's first ask
  }
  void Ask(Timings& timings) {
    auto p = timings.Time([&] { return searcher->Suggest(study, 1); });
    TrialView t =
        FinishedTrial(*study.space, static_cast<int64_t>(study.trials.size()), rng, paused);
    if (!p.empty()) t.params = p[0];
    study.trials.push_back(std::move(t));
  }
  StudyView study;
  Rng rng;
  bool paused;
  std::unique_ptr<search::Searcher> searcher;
};

// Microseconds of one Suggest (interquartile mean, less the clock's own) after `at[0]` and after
// `at[1]` finished trials. The two studies are asked in turn, so that a change in the machine's
// load falls on both alike.
std::pair<double, double> AskUs(const std::string& type, const search::SearchSpace& space,
                                const int at[2], int asks, bool paused) {
  AskedStudy near(type, space, at[0], paused), far(type, space, at[1], paused);
  Timings t[2];
  for (int i = 0; i < asks; ++i) {
    near.Ask(t[0]);
    far.Ask(t[1]);
  }
  return {t[0].NetUs(), t[1].NetUs()};
}

// OnReport is timed per decision it returns: a report answered CONTINUE costs a fraction of one
// answered STOP (no reason text), and the mix shifts with the study (on this bench's curves,
// 65% of the timed reports at trial 100 continue and 59% at trial 10,000), so one median over
// both would compare different work. For the rung schedulers (ASHA, Hyperband and their
// multi-objective forms) a CONTINUE at a rung (the trial is in the top) is timed apart from one
// between rungs (nothing to decide): the first ranks a point, the second only files a value, and
// their mix is most of what one CONTINUE figure measured.
constexpr int kActions = 4;  // search::Action's continue, stop, pause; then continue at a rung
constexpr int kContinueAtRung = 3;
const char* const kActionNames[kActions] = {"CONTINUE", "STOP", "PAUSE", "CONTINUE at a rung"};

struct DecisionTimes {
  Timings report[kActions];
  Timings promotion;
};

// A study run through one scheduler as the coordinator runs it: NextPromotion before each new
// trial, OnReport at each epoch until STOP or PAUSE.
class ScheduledStudy {
 public:
  ScheduledStudy(const std::string& type, const search::Options& options, size_t objectives)
      : objectives_(objectives) {
    std::vector<std::string> errors;
    s_ = search::MakeScheduler(type, options, {kEpochs, true, objectives}, &errors);
    if (!s_) {
      std::fprintf(stderr, "%s: %s\n", type.c_str(), errors.empty() ? "?" : errors[0].c_str());
      std::exit(1);
    }
    study_.max_resource = kEpochs;
    if (objectives > 1) study_.objectives = {{"val_accuracy", true}, {"dollars", false}};
  }
  // Trials started so far, counting a promoted one again (the coordinator's loop iterations).
  int64_t steps() const { return steps_; }
  // Whether a rung scheduler has a rung at this epoch of this trial's bracket.
  bool AtRung(int64_t trial, int64_t epoch) const {
    const std::vector<int64_t>* levels = nullptr;
    if (const auto* a = dynamic_cast<const search::AshaScheduler*>(s_.get())) {
      levels = &a->Levels(a->BracketOf(trial));
    } else if (const auto* m = dynamic_cast<const search::MoAshaScheduler*>(s_.get())) {
      levels = &m->Levels(m->BracketOf(trial));
    }
    return levels && std::find(levels->begin(), levels->end(), epoch) != levels->end();
  }

  // Runs one new or promoted trial; its decisions are always timed (the same code either way),
  // and the times kept in `times` when given.
  void Step(DecisionTimes* times) {
    Timings discarded;
    const std::optional<int64_t> promoted =
        (times ? times->promotion : discarded).Time([&] { return s_->NextPromotion(study_); });
    ++steps_;
    TrialView* t;
    if (promoted) {
      t = &study_.trials[static_cast<size_t>(*promoted)];
    } else {
      study_.trials.push_back(TrialView{});
      t = &study_.trials.back();
      t->number = static_cast<int64_t>(study_.trials.size()) - 1;
    }
    t->state = TrialState::kRunning;
    for (int64_t e = t->LastResource() + 1; e <= kEpochs; ++e) {
      t->values[e] = Curve(static_cast<uint64_t>(t->number), e);
      if (objectives_ > 1) {
        t->more_values.resize(1);
        const double rate = 1.0 + static_cast<double>(search::Mix64(t->number + 1) % 1000) / 1e3;
        t->more_values[0][e] = rate * static_cast<double>(e);
      }
      double call_us, empty_us;
      const search::Decision d = Timed([&] { return s_->OnReport(study_, *t); }, call_us, empty_us);
      const bool at_rung = d.action == search::Action::kContinue && AtRung(t->number, e);
      if (times) {
        times->report[at_rung ? kContinueAtRung : static_cast<int>(d.action)].Add(call_us,
                                                                                  empty_us);
      }
      if (d.action == search::Action::kStop) t->state = TrialState::kStopped;
      if (d.action == search::Action::kPause) t->state = TrialState::kPaused;
      if (d.action != search::Action::kContinue) break;
    }
    if (t->state == TrialState::kRunning) t->state = TrialState::kCompleted;
  }

 private:
  size_t objectives_;
  std::unique_ptr<search::Scheduler> s_;
  StudyView study_;
  int64_t steps_ = 0;
};

// The two points are timed in turn, kRounds times, so that the machine's load (other processes
// on the two cores, which halve or double these figures within seconds) falls on both alike:
// timing all of trial 100 before all of trial 10,000, as this bench did up to b4dc924, read
// ratios of 0.9x and 1.75x for the same code in two runs a second apart. Each round times the
// trials [100, 150) of a study run afresh to 100 (as before: caches warm with that study), then
// kWarmup untimed and kWindow timed trials of one study carried on past 10,000 (the study is
// deterministic, so five copies of it, as before, differed only in when they were timed).
constexpr int kRounds = 5;
constexpr int kWarmup = 10;

struct PointFigures {
  std::vector<double> report_us[kActions][2];  // per action, per point: one figure per round
  std::vector<double> promotion_us[2];
  std::vector<double> timer_us;
};

PointFigures TimeScheduler(const std::string& type, const search::Options& options,
                           size_t objectives, const int points[2]) {
  PointFigures f;
  ScheduledStudy far(type, options, objectives);
  while (far.steps() < points[1]) far.Step(nullptr);
  for (int round = 0; round < kRounds; ++round) {
    DecisionTimes times[2];
    ScheduledStudy near(type, options, objectives);
    while (near.steps() < points[0]) near.Step(nullptr);
    for (int i = 0; i < kWindow; ++i) near.Step(&times[0]);
    for (int i = 0; i < kWarmup; ++i) far.Step(nullptr);
    for (int i = 0; i < kWindow; ++i) far.Step(&times[1]);
    for (int p = 0; p < 2; ++p) {
      for (int a = 0; a < kActions; ++a) {
        if (!times[p].report[a].calls.empty()) {
          f.report_us[a][p].push_back(times[p].report[a].NetUs());
        }
      }
      f.promotion_us[p].push_back(times[p].promotion.NetUs());
    }
    f.timer_us.push_back(times[1].promotion.TimerUs());
  }
  return f;
}

// Below this many microseconds (after the clock's own cost is taken out) a figure is the clock's
// noise, not the call's cost, and a ratio of two of them means nothing.
constexpr double kUnderTheClockUs = 0.01;

void Row(const std::string& label, double a, double b) {
  const char* format = a < 1 && b < 1 ? "| %s | %.3f | %.3f |" : "| %s | %.2f | %.2f |";
  std::printf(format, label.c_str(), a, b);
  if (a < kUnderTheClockUs) {
    std::printf(" - | under the clock |\n");
  } else {
    std::printf(" %.2fx | %s |\n", b / a, b / a <= 1.5 ? "flat" : "grows");
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) {
  using namespace sift::bench;
  const int far = argc > 1 ? std::atoi(argv[1]) : 10000;
  const std::string only = argc > 2 ? argv[2] : "all";
  auto wanted = [&](const std::string& name, bool scheduler) {
    return only == "all" || only == (scheduler ? "schedulers" : "searchers") ||
           ("," + only + ",").find("," + name + ",") != std::string::npos;
  };
  const int points[2] = {100, far};
  PrintMachine();
  std::printf(
      "\n## One decision at trial %d and at trial %d (us: interquartile mean less the clock's "
      "own; schedulers: median of 5 rounds; target: within 1.5x)\n\n",
      points[0], points[1]);
  std::printf("| decision | trial %d | trial %d | ratio | |\n|---|---|---|---|---|\n", points[0],
              points[1]);
  struct Case {
    const char* label;
    const char* type;
    sift::search::Options options;
    size_t objectives = 1;
  };
  const std::vector<Case> schedulers = {
      {"fifo", "fifo", {}},
      {"asha (stopping)", "asha", {}},
      {"asha (promotion)", "asha", {{"variant", std::string("promotion")}}},
      {"hyperband (promotion)", "hyperband", {{"variant", std::string("promotion")}}},
      {"median", "median", {}},
      {"plateau", "plateau", {}},
      {"curve", "curve", {}},
      {"curve (bar reached)", "curve", {{"bar", std::string("reached")}}},
      {"mo asha (stopping)", "asha", {}, 2},
      {"mo asha (promotion)", "asha", {{"variant", std::string("promotion")}}, 2},
      {"mo hyperband (promotion)", "hyperband", {{"variant", std::string("promotion")}}, 2},
      {"mo median", "median", {}, 2},
      {"mo plateau", "plateau", {}, 2},
  };
  std::vector<double> timer_us;
  for (const auto& c : schedulers) {
    if (!wanted(c.label, true)) continue;
    const PointFigures f = TimeScheduler(c.type, c.options, c.objectives, points);
    const auto& reports = f.report_us;
    const auto& promotions = f.promotion_us;
    timer_us.insert(timer_us.end(), f.timer_us.begin(), f.timer_us.end());
    for (int a = 0; a < kActions; ++a) {
      const double near = Median(reports[a][0]), far_us = Median(reports[a][1]);
      if (!reports[a][0].empty() && !reports[a][1].empty()) {
        Row(std::string(c.label) + " OnReport -> " + kActionNames[a], near, far_us);
      }
    }
    if (std::string(c.type) != "fifo" && std::string(c.type) != "median" &&
        std::string(c.type) != "plateau" && std::string(c.type) != "curve") {
      Row(std::string(c.label) + " NextPromotion", Median(promotions[0]), Median(promotions[1]));
    }
  }
  if (!timer_us.empty()) {
    std::printf(
        "\nClock read twice around each call: %.3f us (interquartile mean, median of the "
        "scheduler rounds), subtracted from every figure above.\n\n",
        Median(timer_us));
  }
  const sift::search::SearchSpace space = LoadgenSpace();
  for (const char* type : {"random", "sobol", "grid", "tpe", "bohb", "gp"}) {
    if (!wanted(type, false)) continue;
    const auto [near, far_us] = AskUs(type, space, points, 20, false);
    Row(std::string(type) + " Suggest", near, far_us);
  }
  // The same asks over a history of mostly paused trials: every ask looks at each of them again
  // (a paused trial may have been resumed since), where a finished one is never looked at twice.
  for (const char* type : {"tpe", "bohb"}) {
    const std::string label = std::string(type) + " (paused)";
    if (!wanted(label, false)) continue;
    const auto [near, far_us] = AskUs(type, space, points, 20, true);
    Row(label + " Suggest", near, far_us);
  }
  return 0;
}

// Ask latency of TPE and GP-BO against the number of observations (6-d Hartmann), and scheduler
// decision latency with 10,000 trials. Usage: search_speed_bench [optuna_speed.txt]
#include <cstdio>
#include <memory>

#include "bench/search/bench_util.h"
#include "bench/search/test_functions.h"
#include "search/factory.h"
#include "search/rng.h"

namespace sift::bench {
namespace {

using search::Rng;
using search::StudyView;
using search::TrialState;
using search::TrialView;

constexpr double kGpTargetMs = 20.0, kTpeTargetMs = 2.0, kSchedulerTargetUs = 50.0;

// Study with n completed random trials on Hartmann-6.
StudyView RandomHistory(const TestFunction& fn, int n) {
  StudyView study;
  study.space = &fn.space;
  study.seed = 1;
  study.objective.maximize = false;
  Rng rng(99);
  for (int i = 0; i < n; ++i) {
    TrialView t;
    t.number = i;
    t.params = fn.space.Sample(rng);
    t.state = TrialState::kCompleted;
    t.values[1] = fn.f(t.params);
    study.trials.push_back(t);
  }
  return study;
}

struct AskTimes {
  double cold_ms, median_ms, p90_ms;
};

// First ask (cold: fits, factorisations) and then `asks` more, each after telling the previous.
AskTimes TimeAsks(const std::string& type, const TestFunction& fn, int n, int asks) {
  StudyView study = RandomHistory(fn, n);
  std::vector<std::string> errors;
  auto searcher = search::MakeSearcher(type, {}, fn.space, &errors);
  std::vector<double> ms;
  double cold = 0;
  for (int i = 0; i <= asks; ++i) {
    const double t0 = NowMs();
    auto p = searcher->Suggest(study, 1);
    const double dt = NowMs() - t0;
    if (i == 0)
      cold = dt;
    else
      ms.push_back(dt);
    TrialView t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.params = p[0];
    t.state = TrialState::kCompleted;
    t.values[1] = fn.f(t.params);
    study.trials.push_back(t);
  }
  return {cold, Median(ms), Quantile(ms, 0.9)};
}

void SearcherLatency(const std::map<std::string, std::string>& ref) {
  const TestFunction fn = QualityFunctions()[1];  // Hartmann-6
  std::printf("\n## Ask latency, 6-d (Hartmann-6 history of random trials)\n\n");
  std::printf(
      "| searcher | observations | cold ask ms | median ask ms | p90 ask ms | target | "
      "Optuna 3.1 TPE ms | Optuna / ours |\n|---|---|---|---|---|---|---|---|\n");
  for (const char* type : {"tpe", "gp"}) {
    for (int n : {100, 1000, 5000}) {
      const bool gp = std::string(type) == "gp";
      const AskTimes t = TimeAsks(type, fn, n, gp && n >= 5000 ? 3 : 20);
      std::string optuna = "-", ratio = "-";
      auto it = ref.find("speed.optuna_tpe." + std::to_string(n));
      if (!gp && it != ref.end()) {
        optuna = it->second;
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.0fx", std::stod(it->second) / t.median_ms);
        ratio = buf;
      }
      char target[32] = "-";
      if (gp && n == 1000) std::snprintf(target, sizeof(target), "<= %.0f ms", kGpTargetMs);
      if (!gp && n == 5000) std::snprintf(target, sizeof(target), "<= %.0f ms", kTpeTargetMs);
      std::printf("| %s | %d | %.2f | %.3f | %.3f | %s | %s | %s |\n", type, n, t.cold_ms,
                  t.median_ms, t.p90_ms, target, optuna.c_str(), ratio.c_str());
      std::fflush(stdout);
    }
  }
}

// 10,000 trials with learning curves; then time decisions on further reports.
void SchedulerLatency() {
  constexpr int kTrials = 10000;
  constexpr int64_t kMax = 27;
  std::printf("\n## Scheduler decision latency, 10,000 trials (max 27 epochs)\n\n");
  std::printf(
      "| scheduler | median us | p99 us | NextPromotion median us | target |\n"
      "|---|---|---|---|---|\n");
  struct Case {
    const char* label;
    const char* type;
    search::Options options;
  };
  const std::vector<Case> cases = {
      {"asha (stopping)", "asha", {}},
      {"asha (promotion)", "asha", {{"variant", std::string("promotion")}}},
      {"hyperband (promotion)", "hyperband", {{"variant", std::string("promotion")}}},
      {"median", "median", {}},
      {"plateau", "plateau", {}},
      {"asha + plateau", "asha", {{"plateau.patience", int64_t{3}}}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> errors;
    auto s = search::MakeScheduler(c.type, c.options, {kMax, true}, &errors);
    StudyView study;
    study.max_resource = kMax;
    Rng rng(5);
    // History: trial i trained for a random number of epochs, then is paused or stopped.
    for (int i = 0; i < kTrials; ++i) {
      TrialView t;
      t.number = i;
      const double q = rng.Uniform();
      const int64_t epochs = 1 + static_cast<int64_t>(rng.Below(9));
      for (int64_t e = 1; e <= epochs; ++e) t.values[e] = q * (1 - std::exp(-e / 3.0));
      t.state = i % 3 == 0 ? TrialState::kPaused : TrialState::kStopped;
      study.trials.push_back(t);
    }
    s->NextPromotion(study);  // folds the history in (a coordinator restart)
    std::vector<double> us, promo_us;
    for (int r = 0; r < 2000; ++r) {
      TrialView& t = study.trials[rng.Below(kTrials)];
      const int64_t e = t.LastResource() + 1;
      if (e > kMax) continue;
      t.values[e] = rng.Uniform();
      const double t0 = NowMs();
      s->OnReport(study, t);
      us.push_back((NowMs() - t0) * 1e3);
      if (r % 10 == 0) {
        const double t1 = NowMs();
        s->NextPromotion(study);
        promo_us.push_back((NowMs() - t1) * 1e3);
      }
    }
    std::printf("| %s | %.2f | %.2f | %.2f | <= %.0f us |\n", c.label, Median(us),
                Quantile(us, 0.99), Median(promo_us), kSchedulerTargetUs);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) {
  sift::bench::PrintMachine();
  const auto ref = sift::bench::ReadReference(argc > 1 ? argv[1] : nullptr);
  if (ref.count("info.optuna"))
    std::printf("reference: Optuna %s\n", ref.at("info.optuna").c_str());
  sift::bench::SchedulerLatency();
  sift::bench::SearcherLatency(ref);
  return 0;
}

#include "tests/coordinator/report/synthetic_study.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/config/config.h"
#include "coordinator/cost/alerts.h"
#include "search/rng.h"

namespace sift::testing {
namespace {

using coordinator::ReportRecord;
using coordinator::SegmentRecord;

constexpr int64_t kMaxEpochs = 9;  // ASHA rungs at 1 and 3 (eta 3)
constexpr double kStart = 1.7e9;   // unix seconds: a fixed date keeps it deterministic

std::string Config(const SyntheticStudy& o) {
  return fmt::format(R"(name: {}
objective: {{metric: val_accuracy, direction: maximize}}
search_space:
  lr: {{type: float, low: 1.0e-4, high: 1.0e-1, scale: log}}
  hidden: {{type: int, low: 32, high: 512, scale: log}}
  dropout: {{type: float, low: 0.0, high: 0.5}}
  optimizer: {{type: categorical, choices: [adam, sgd]}}
trainer: {{model: mlp, depth: 2}}
searcher: {{type: random}}
scheduler: {{type: asha, eta: 3, min_resource: 1}}
budget: {{max_trials: {}, max_epochs: {}, max_dollars: 0, max_hours: 0}}
)",
                     o.name, o.trials, kMaxEpochs);
}

// The config's objective, space and name; throws naming the problem when it does not parse.
common::StudyConfig Parsed(const std::string& text) {
  common::StudyConfig config;
  const auto errors =
      common::ParseStudyConfig(text, "synthetic", &config, common::ConfigLimits::None());
  if (!errors.empty()) throw std::runtime_error("synthetic study config: " + errors.front());
  return config;
}

// The budget alerts the coordinator records as a study crosses 50, 80 and 100% of max_dollars.
void RecordAlerts(coordinator::Store& store, int64_t id, const common::StudyConfig& config,
                  double at) {
  common::AlertConfig alerts;
  alerts.thresholds = {50, 80, 100};
  const double budget = config.budget.max_dollars > 0 ? config.budget.max_dollars : 1.0;
  for (const auto& e : coordinator::DueBudgetAlerts(alerts, budget, budget, {})) {
    coordinator::CostFacts facts{id, config.name, config.tags, at, budget, config.budget};
    store.InsertStudyEvent({id, at, "coordinator", e.action, coordinator::CostEventJson(e, facts)});
  }
}

}  // namespace

int64_t WriteSyntheticStudy(coordinator::Store& store, const SyntheticStudy& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 0.01);
  const bool custom = !o.config_text.empty();
  const common::StudyConfig config = Parsed(custom ? o.config_text : Config(o));
  const bool maximize = config.objective.maximize;
  const std::string metric = config.objective.metric;
  search::Rng space_rng(o.seed);
  int64_t id = 0;
  store.Atomically([&] {
    coordinator::StudyRecord study;
    study.name = custom ? config.name : o.name;
    study.config_text = custom ? o.config_text : Config(o);
    study.state = coordinator::StudyState::kRunning;
    study.created_at = kStart;
    id = store.CreateStudy(study);
    std::vector<double> free_at(static_cast<size_t>(o.workers), kStart);
    for (int w = 0; w < o.workers; ++w) {
      coordinator::WorkerRecord worker{fmt::format("w{}", w),
                                       fmt::format("worker-{}", w),
                                       w % 4 == 0 ? "n1-standard-8" : "g4dn.xlarge",
                                       w % 4 == 0 ? "on-demand" : "spot",
                                       w % 4 == 0 ? 0.38 : 0.16,
                                       "cpu",
                                       8,
                                       kStart};
      store.UpsertWorker(worker);
    }
    int64_t leases = 0;
    double last_end = kStart;
    for (int64_t n = 0; n < o.trials; ++n) {
      const double lr = std::pow(10.0, -4 + 3 * u(rng));
      const auto hidden = static_cast<int64_t>(std::lround(std::pow(2.0, 5 + 4 * u(rng))));
      const double dropout = 0.5 * u(rng);
      const bool adam = u(rng) < 0.5;
      // A plausible response: best near lr 3e-3, wider is better, too much dropout hurts. A
      // config's own space gets a response drawn per trial instead.
      const double peak = custom ? 0.7 + 0.25 * u(rng)
                                 : 0.9 - 0.05 * std::pow(std::log10(lr) + 2.5, 2) +
                                       0.01 * std::log2(static_cast<double>(hidden) / 32) -
                                       0.1 * dropout * dropout + (adam ? 0.01 : 0.0);
      const double epoch_s = 4.0 + static_cast<double>(hidden) / 64.0;
      coordinator::TrialRecord trial;
      trial.study_id = id;
      trial.number = n;
      trial.params = custom ? config.space.Sample(space_rng)
                            : search::Params{{"lr", lr},
                                             {"hidden", hidden},
                                             {"dropout", dropout},
                                             {"optimizer", std::string(adam ? "adam" : "sgd")}};
      trial.state = search::TrialState::kRunning;
      // Trials start on the worker free first.
      auto worker = std::min_element(free_at.begin(), free_at.end());
      trial.created_at = *worker;
      store.InsertTrial(trial);
      // ASHA: two in three stop at rung 1, of the rest two in three at rung 3; some pause at a
      // rung and are promoted later (a new lease resuming from the rung's epoch).
      const double draw = peak + 0.04 * (u(rng) - 0.5);  // a noisy rung: the worse stop early
      const int64_t last_epoch = draw < 0.84 ? 1 : draw < 0.89 ? 3 : kMaxEpochs;
      const bool diverges = n < o.diverged;
      const bool paused = last_epoch == kMaxEpochs && u(rng) < 0.5;
      int64_t epoch = 0;
      double t = *worker;
      int64_t w = worker - free_at.begin();
      while (epoch < last_epoch) {
        SegmentRecord seg;
        seg.lease_id = fmt::format("s{}-l{}", id, leases++);
        seg.worker_id = fmt::format("w{}", w);
        seg.study_id = id;
        seg.number = n;
        seg.start = t;
        seg.price_per_hour = w % 4 == 0 ? 0.38 : 0.16;
        seg.market = w % 4 == 0 ? "on-demand" : "spot";
        seg.start_epoch = epoch;
        store.OpenSegment(seg);
        const bool preempt = seg.market == "spot" && u(rng) < o.preempt_chance;
        const int64_t stop_at = paused && epoch < 3 ? 3 : last_epoch;
        int64_t seq = 0;
        std::string end = "completed";
        while (epoch < stop_at) {
          if (preempt && epoch > seg.start_epoch) {
            // Lost mid-epoch: the half epoch since the last report is redone on the next lease.
            t += epoch_s / 2;
            store.CloseSegment(id, seg.lease_id, t, "preempted", "", epoch_s / 2);
            end = "preempted";
            break;
          }
          ++epoch;
          t += epoch_s;
          ReportRecord r;
          r.study_id = id;
          r.number = n;
          r.epoch = epoch;
          const double rise = 1 - std::exp(-0.6 * static_cast<double>(epoch));
          // Minimized objectives (val_rmse, a loss) fall from about 2x towards their floor.
          double value = maximize ? peak * rise + noise(rng) : (4 - 3 * peak) * (2 - rise);
          if (diverges && epoch == last_epoch) value = std::nan("");
          // And what a worker measures of the model every epoch (an MLP of this width on 28x28
          // inputs), which the examples with several objectives bound or minimize.
          r.metrics = {{metric, value},
                       {"train_loss", 2.3 * std::exp(-0.3 * epoch)},
                       {"params", static_cast<double>(795 * hidden + 10)},
                       {"inference_ms", 0.05 + static_cast<double>(hidden) / 256}};
          r.lease_id = seg.lease_id;
          r.seq = ++seq;
          r.created_at = t;
          r.decision = "CONTINUE";
          if (diverges && epoch == last_epoch) {
            r.decision = "STOP";
            r.reason = metric + " is NaN: diverged";
            end = "diverged";
          } else if (epoch == last_epoch && epoch < kMaxEpochs) {
            r.decision = "STOP";
            r.reason = fmt::format("asha: below the top third at rung {}", epoch);
            end = "stopped";
          } else if (epoch == stop_at && stop_at < last_epoch) {
            r.decision = "PAUSE";
            r.reason = fmt::format("asha: waiting for promotion at rung {}", epoch);
            end = "paused";
          } else if (epoch == kMaxEpochs) {
            r.reason = "max epochs reached (9)";
          }
          store.InsertReport(r);
        }
        if (end != "preempted") store.CloseSegment(id, seg.lease_id, t, end);
        free_at[static_cast<size_t>(w)] = t;
        last_end = std::max(last_end, t);
        if (end == "paused" || end == "preempted") {
          // Resumed later, on whichever worker is free first.
          auto next = std::min_element(free_at.begin(), free_at.end());
          w = next - free_at.begin();
          t = std::max(*next, t + 30);
          if (end == "preempted") {
            coordinator::IdleSegmentRecord idle{seg.worker_id,      id,         t - 30,  t - 5,
                                                seg.price_per_hour, seg.market, "leased"};
            store.InsertIdleSegment(idle);
          }
        }
      }
      const bool stopped = last_epoch < kMaxEpochs;
      if (diverges) {
        store.UpdateTrialState(id, n, search::TrialState::kDiverged, metric + " is NaN: diverged",
                               t);
        continue;
      }
      store.UpdateTrialState(
          id, n, stopped ? search::TrialState::kStopped : search::TrialState::kCompleted,
          stopped ? fmt::format("asha: below the top third at rung {}", last_epoch)
                  : "max epochs reached (9)",
          t);
    }
    if (o.alerts) RecordAlerts(store, id, config, last_end);
    store.UpdateStudy(id, coordinator::StudyState::kCompleted,
                      fmt::format("all {} trials finished", o.trials), last_end);
  });
  return id;
}

}  // namespace sift::testing

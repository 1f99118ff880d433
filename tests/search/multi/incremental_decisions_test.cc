// MO-ASHA and the multi-objective median rule keep their rungs' ranks and epochs' sorted columns
// across reports. These random studies check every decision against the rule computed from the
// whole view, and against a scheduler rebuilt on the same view.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "search/median_scheduler.h"
#include "search/multi/mo_asha_scheduler.h"
#include "search/multi/mo_median.h"
#include "search/multi/mo_median_scheduler.h"
#include "search/multi/objective_vectors.h"
#include "search/rng.h"
#include "search/rungs.h"
#include "tests/search/scheduler_sim.h"

namespace sift::search {
namespace incremental_decisions_test {

constexpr int64_t kEpochs = 9;

StudyView RandomStudy(size_t objectives) {
  StudyView study;
  study.objectives = {{"val_accuracy", true}, {"dollars", false}, {"latency", false}};
  study.objectives.resize(objectives);
  study.objective = study.objectives[0];
  study.constraints = {{"size", 1.0, true}};
  study.max_resource = kEpochs;
  return study;
}

// The next epoch of a trial: values on a coarse grid (ties), sometimes NaN; the constraint
// sometimes violated, sometimes not reported.
void ReportNext(Rng& rng, TrialView& t, size_t objectives) {
  const int64_t e = t.LastResource() + 1;
  auto value = [&] { return rng.Below(25) == 0 ? NAN : static_cast<double>(rng.Below(6)); };
  t.values[e] = value();
  t.more_values.resize(objectives - 1);
  for (auto& curve : t.more_values) curve[e] = value();
  t.constraint_values.resize(1);
  if (rng.Below(3) != 0) t.constraint_values[0][e] = rng.Below(5) == 0 ? 1.5 : 0.5;
}

// MO-ASHA's rule read off the whole view: the trial continues when it is not at a rung or is in
// the constrained top of every point recorded there (stopping: the survivors; promotion: the
// promotable), else it stops or pauses.
Action AshaFromScratch(const StudyView& study, const TrialView& trial, const AshaOptions& o) {
  const std::vector<int64_t> levels = AshaBrackets(o).Levels(0);
  const int64_t resource = trial.LastResource();
  if (RungIndex(levels, resource) < 0) return Action::kContinue;
  std::vector<TrialPoint> points;
  for (const TrialView& t : study.trials) {
    if (t.values.count(resource) > 0) points.push_back(PointAt(study, t, resource));
  }
  const auto n = static_cast<int64_t>(points.size());
  const int64_t top = o.promotion ? PromotableCount(n, o.eta) : SurvivorCount(n, o.eta);
  if (ConstrainedInTop(points, trial.number, std::min(n, top))) return Action::kContinue;
  return o.promotion ? Action::kPause : Action::kStop;
}

// The oriented running average (or best) of each objective up to `upto`; NaN counts as -inf.
std::vector<double> Summary(const StudyView& study, const TrialView& t, int64_t upto,
                            bool average) {
  std::vector<double> out;
  for (size_t i = 0; i < ObjectiveCount(study); ++i) {
    const CurveValues& curve = *ObjectiveCurve(t, i);
    const double sign = ObjectiveAt(study, i).maximize ? 1.0 : -1.0;
    double sum = 0, best = -INFINITY, n = 0;
    for (auto it = curve.begin(); it != curve.end() && it->first <= upto; ++it, ++n) {
      const double v = std::isnan(it->second) ? -INFINITY : sign * it->second;
      sum += v;
      best = std::max(best, v);
    }
    out.push_back(average ? sum / n : best);
  }
  return out;
}

// The median rule read off the whole view (mo_median_scheduler.h).
Action MedianFromScratch(const StudyView& study, const TrialView& trial, const MedianOptions& o) {
  const int64_t t = trial.LastResource();
  if (t < o.min_resource || t >= study.max_resource) return Action::kContinue;
  Points others;
  std::vector<double> violations;
  for (const TrialView& other : study.trials) {
    if (other.number == trial.number || other.values.count(t) == 0) continue;
    others.push_back(Summary(study, other, t, true));
    violations.push_back(ViolationAt(study, other, t));
  }
  if (static_cast<int64_t>(others.size()) < o.min_trials || others.empty()) {
    return Action::kContinue;
  }
  std::sort(violations.begin(), violations.end());
  const double median = MedianExcluding(violations, -1), mine = ViolationAt(study, trial, t);
  if (mine != median) return mine > median ? Action::kStop : Action::kContinue;
  const bool behind =
      DominatedByMedian(Summary(study, trial, t, o.running_average), others, o.grace);
  return behind ? Action::kStop : Action::kContinue;
}

// Trials report in a random interleaving, as parallel workers do; each decision is compared
// with `from_scratch` and with a scheduler built afresh on the same view.
template <class Make, class FromScratch>
void RunStudy(uint64_t seed, size_t objectives, Make make, FromScratch from_scratch) {
  Rng rng(seed);
  StudyView study = RandomStudy(objectives);
  std::unique_ptr<Scheduler> live = make();
  std::vector<int64_t> running;
  int decisions = 0, stops = 0;
  while (decisions < 600) {
    // Another study's empty view now and then: the caches must be dropped and rebuilt.
    if (decisions % 250 == 249) live->OnReport(StudyView{}, TrialView{});
    if (running.size() < 6) {
      TrialView t;
      t.number = static_cast<int64_t>(study.trials.size());
      t.state = TrialState::kRunning;
      study.trials.push_back(t);
      running.push_back(t.number);
    }
    const size_t pick = rng.Below(running.size());
    TrialView& t = study.trials[static_cast<size_t>(running[pick])];
    ReportNext(rng, t, objectives);
    const Decision d = live->OnReport(study, t);
    const Decision again = make()->OnReport(study, t);
    ++decisions;
    ASSERT_EQ(d.action, from_scratch(study, t))
        << "seed " << seed << ", trial " << t.number << " at epoch " << t.LastResource();
    ASSERT_EQ(d.action, again.action);
    ASSERT_EQ(d.reason, again.reason);
    stops += d.action != Action::kContinue;
    if (d.action != Action::kContinue || t.LastResource() == kEpochs) {
      t.state = d.action == Action::kStop    ? TrialState::kStopped
                : d.action == Action::kPause ? TrialState::kPaused
                                             : TrialState::kCompleted;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  // Both answers (continue, and stop or pause) come up often, so the comparison above is not all
  // one way.
  EXPECT_GT(stops, 50) << "seed " << seed;
  EXPECT_LT(stops, decisions - 50) << "seed " << seed;
}

void RunMoAsha(bool promotion, uint64_t first_seed, uint64_t last_seed) {
  AshaOptions o;
  o.eta = 2;
  o.max_resource = kEpochs;
  o.promotion = promotion;
  for (size_t objectives : {2u, 3u}) {
    for (uint64_t seed = first_seed; seed <= last_seed; ++seed) {
      RunStudy(
          seed, objectives, [&] { return std::make_unique<MoAshaScheduler>(o); },
          [&](const StudyView& s, const TrialView& t) { return AshaFromScratch(s, t, o); });
    }
  }
}

TEST(IncrementalDecisions, MoAshaDecidesAsFromTheWholeRung) { RunMoAsha(false, 1, 4); }

// The promotion variant's check at a rung (MO-Hyperband's too): the same ranks, the top
// floor(n / eta) promoted, the others paused.
TEST(IncrementalDecisions, MoAshaPromotionDecidesAsFromTheWholeRung) { RunMoAsha(true, 5, 7); }

// MO-ASHA's NextPromotion read off the whole view: highest rung first, brackets in order, the
// first PAUSED trial still at the rung's epoch in ConstrainedTopTrials' order of the promotable.
std::optional<int64_t> PromotionFromScratch(const StudyView& study, const AshaOptions& o) {
  const AshaBrackets brackets(o);
  for (const auto& [b, k] : brackets.HighestFirst()) {
    const int64_t level = brackets.Levels(b)[k];
    std::vector<TrialPoint> points;
    for (const TrialView& t : study.trials) {
      if (brackets.Of(t.number) == b && t.values.count(level) > 0) {
        points.push_back(PointAt(study, t, level));
      }
    }
    const auto n = static_cast<int64_t>(points.size());
    for (int64_t number : ConstrainedTopTrials(points, PromotableCount(n, o.eta))) {
      const TrialView& t = study.trials[static_cast<size_t>(number)];
      if (t.state == TrialState::kPaused && t.LastResource() == level) return number;
    }
  }
  return std::nullopt;
}

// A churning history (several workers, NaNs, a constraint, failures, paused trials stopped from
// outside, promoted trials resuming at the rung, the tables now and then cleared and rebuilt):
// every NextPromotion equals the scan from scratch, and a scheduler built fresh on the view.
TEST(IncrementalDecisions, MoAshaPromotionsAreTheScanFromScratch) {
  for (const int64_t brackets : {1, 2}) {
    for (size_t objectives : {2u, 3u}) {
      AshaOptions o;
      o.eta = 2;
      o.max_resource = kEpochs;
      o.promotion = true;
      o.brackets = brackets;
      MoAshaScheduler kept(o);
      StudyView study = RandomStudy(objectives);
      Rng rng(static_cast<uint64_t>(brackets) * 10 + objectives);
      int asks = 0;
      const auto asked = [&](int step, std::optional<int64_t> got) {
        const auto expected = PromotionFromScratch(study, o);
        EXPECT_EQ(got, expected) << "step " << step;
        if (++asks % 9 == 0) {
          EXPECT_EQ(MoAshaScheduler(o).NextPromotion(study), got);
        }
        return got == expected;
      };
      const int promoted = testing::Churn(
          kept, study, rng, 3000, 400, 60, [&](TrialView& t) { ReportNext(rng, t, objectives); },
          asked, [](int, const TrialView&, const Decision&) { return true; });
      EXPECT_GT(promoted, 20) << brackets << " brackets, " << objectives << " objectives";
    }
  }
}

TEST(IncrementalDecisions, MoMedianDecidesAsFromTheWholeEpoch) {
  MedianOptions o;
  o.min_trials = 2;
  for (bool running_average : {false, true}) {
    o.running_average = running_average;
    for (size_t objectives : {2u, 3u}) {
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        RunStudy(
            seed, objectives, [&] { return std::make_unique<MoMedianScheduler>(o); },
            [&](const StudyView& s, const TrialView& t) { return MedianFromScratch(s, t, o); });
      }
    }
  }
}

}  // namespace incremental_decisions_test
}  // namespace sift::search

#include "search/asha_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "search/rng.h"
#include "tests/search/scheduler_sim.h"

namespace sift::search {
namespace asha_scheduler_test {

class AshaExample : public ::testing::Test {
 protected:
  // Reports `value` for a new or resumed trial at `epoch` and applies the decision.
  Decision Report(AshaScheduler& s, int64_t trial, int64_t epoch, double value) {
    while (static_cast<int64_t>(study.trials.size()) <= trial) {
      TrialView t;
      t.number = static_cast<int64_t>(study.trials.size());
      study.trials.push_back(t);
    }
    TrialView& t = study.trials[trial];
    t.state = TrialState::kRunning;
    t.values[epoch] = value;
    Decision d = s.OnReport(study, t);
    if (d.action == Action::kPause) t.state = TrialState::kPaused;
    if (d.action == Action::kStop) t.state = TrialState::kStopped;
    return d;
  }
  StudyView study;
};

// eta = 3, rungs at epochs 1 and 3, max 9. Worked by the paper's rule (Algorithm 2: promote the
// best unpromoted trial among the top floor(n/eta) of a rung, highest rung first).
TEST_F(AshaExample, PromotionFollowsThePapersRule) {
  study.max_resource = 9;
  AshaScheduler s({/*eta=*/3, /*min_resource=*/1, /*max_resource=*/9, /*promotion=*/true});
  EXPECT_EQ(Report(s, 0, 1, 0.5).action, Action::kPause);  // n=1: floor(1/3)=0 promotable
  EXPECT_EQ(Report(s, 1, 1, 0.7).action, Action::kPause);  // n=2: 0
  Decision d = Report(s, 2, 1, 0.6);                       // n=3: 1 promotable, t2 is 2nd
  EXPECT_EQ(d.action, Action::kPause);
  EXPECT_EQ(d.reason, "asha: paused at rung 0 (epoch 1): not in the top 1 of 3 (top 1/3)");
  EXPECT_EQ(s.NextPromotion(study), 1);  // the best of rung 0
  study.trials[1].state = TrialState::kRunning;
  EXPECT_EQ(s.NextPromotion(study), std::nullopt);             // t1 is now promoted (not PAUSED)
  EXPECT_EQ(Report(s, 1, 2, 0.72).action, Action::kContinue);  // epoch 2 is no rung
  EXPECT_EQ(Report(s, 1, 3, 0.75).action, Action::kPause);     // alone at rung 1
  d = Report(s, 3, 1, 0.9);  // n=4: 1 promotable and t3 is the best: trains on at once
  EXPECT_EQ(d.action, Action::kContinue);
  EXPECT_EQ(d.reason, "asha: promoted at rung 0 (epoch 1): in the top 1 of 4 (top 1/3)");
  EXPECT_EQ(Report(s, 4, 1, 0.4).action, Action::kPause);     // n=5: 1
  EXPECT_EQ(Report(s, 5, 1, 0.8).action, Action::kContinue);  // n=6: 2, t5 is 2nd
  EXPECT_EQ(Report(s, 6, 1, 0.75).action, Action::kPause);    // n=7: 2, t6 is 3rd
  EXPECT_EQ(s.NextPromotion(study), std::nullopt);
  EXPECT_EQ(Report(s, 7, 1, 0.3).action, Action::kPause);  // n=8: 2
  EXPECT_EQ(Report(s, 8, 1, 0.2).action, Action::kPause);  // n=9: 3 -> t6 enters the top 3
  EXPECT_EQ(s.NextPromotion(study), 6);
  // A fresh scheduler over the same history agrees (what a restarted coordinator does).
  AshaScheduler fresh({3, 1, 9, true});
  EXPECT_EQ(fresh.NextPromotion(study), 6);
}

TEST_F(AshaExample, PromotionPrefersTheHighestRung) {
  study.max_resource = 27;
  AshaScheduler s({3, 1, 27, true});
  Report(s, 0, 1, 0.96);
  Report(s, 1, 1, 0.97);
  Report(s, 2, 1, 0.5);  // n=3: t1 is promotable at rung 0 but stays paused for now
  const double at_rung1[] = {1.0, 0.9, 0.8};
  for (int i = 3; i < 6; ++i) {  // t3..t5 reach rung 1 (epoch 3); only t3 is in its top 1/3
    study.trials.resize(i + 1);
    study.trials[i].number = i;
    study.trials[i].values = {{1, 0.1}, {2, 0.1}};
    EXPECT_EQ(Report(s, i, 3, at_rung1[i - 3]).action, Action::kPause);
  }
  EXPECT_EQ(s.NextPromotion(study), 3);  // rung 1 before rung 0's t1
  study.trials[3].state = TrialState::kRunning;
  EXPECT_EQ(s.NextPromotion(study), 1);
}

TEST_F(AshaExample, StoppingVariantStopsBelowTheCutoff) {
  study.max_resource = 9;
  AshaScheduler s({3, 1, 9, false});
  EXPECT_EQ(Report(s, 0, 1, 0.5).action, Action::kContinue);  // alone: the best so far
  EXPECT_EQ(Report(s, 1, 1, 0.7).action, Action::kContinue);
  Decision d = Report(s, 2, 1, 0.6);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "asha: below rung 0 (epoch 1) cutoff 0.7 (top 1/3 of 3 trials)");
  EXPECT_EQ(s.NextPromotion(study), std::nullopt);  // the stopping variant never pauses
}

TEST_F(AshaExample, MinimizeUsesTheLowestValues) {
  study.max_resource = 9;
  study.objective.maximize = false;
  AshaScheduler s({3, 1, 9, false});
  Report(s, 0, 1, 0.5);
  Report(s, 1, 1, 0.3);
  EXPECT_EQ(Report(s, 2, 1, 0.4).action, Action::kStop);
  EXPECT_EQ(Report(s, 3, 1, 0.1).action, Action::kContinue);
}

TEST(Hyperband, BracketsHaveTheirOwnRungs) {
  AshaScheduler s({/*eta=*/3, /*min_resource=*/1, /*max_resource=*/27, false, /*brackets=*/3});
  EXPECT_EQ(s.Levels(0), (std::vector<int64_t>{1, 3, 9}));
  EXPECT_EQ(s.Levels(1), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(s.Levels(2), (std::vector<int64_t>{9}));
  // A trial in bracket 2 is never judged at epochs 1 and 3.
  int64_t n = 0;
  while (s.BracketOf(n) != 2) ++n;
  StudyView study;
  study.max_resource = 27;
  study.trials.resize(n + 1);
  for (int64_t i = 0; i <= n; ++i) study.trials[i].number = i;
  TrialView& t = study.trials[n];
  t.values = {{1, 0.0}};
  EXPECT_EQ(s.OnReport(study, t).action, Action::kContinue);
}

// NextPromotion recomputed from scratch: highest rung first, brackets in order, the first PAUSED
// trial still at the rung's epoch among the top floor(n / eta) of the rung, sorted afresh.
std::optional<int64_t> ScanForPromotion(const AshaScheduler& s, const AshaOptions& o,
                                        const StudyView& study) {
  size_t max_rungs = 0;
  for (int b = 0; b < o.brackets; ++b) max_rungs = std::max(max_rungs, s.Levels(b).size());
  for (size_t k = max_rungs; k-- > 0;) {
    for (int b = 0; b < o.brackets; ++b) {
      if (k >= s.Levels(b).size()) continue;
      const int64_t level = s.Levels(b)[k];
      std::vector<RungRecord::Entry> rung;
      for (const TrialView& t : study.trials) {
        auto it = t.values.find(level);
        if (s.BracketOf(t.number) == b && it != t.values.end()) {
          rung.push_back({RungRecord::Orderable(study.Score(it->second)), t.number});
        }
      }
      std::sort(rung.begin(), rung.end(), RungRecord::Better);
      const int64_t promotable = PromotableCount(static_cast<int64_t>(rung.size()), o.eta);
      for (int64_t r = 0; r < promotable; ++r) {
        const TrialView& t = study.trials[static_cast<size_t>(rung[static_cast<size_t>(r)].trial)];
        if (t.state == TrialState::kPaused && t.LastResource() == level) return t.number;
      }
    }
  }
  return std::nullopt;
}

// Passes decisions through and checks every NextPromotion of the kept scheduler against the scan
// above and against a scheduler built fresh on the same view (a restarted coordinator).
class CheckedPromotions : public Scheduler {
 public:
  explicit CheckedPromotions(AshaOptions o) : options_(o), kept_(o) {}
  Decision OnReport(const StudyView& study, const TrialView& trial) override {
    return kept_.OnReport(study, trial);
  }
  std::optional<int64_t> NextPromotion(const StudyView& study) override {
    const auto got = kept_.NextPromotion(study);
    EXPECT_EQ(got, ScanForPromotion(kept_, options_, study)) << study.trials.size();
    if (++calls_ % 7 == 0) {
      AshaScheduler fresh(options_);
      EXPECT_EQ(fresh.NextPromotion(study), got) << study.trials.size();
    }
    promoted_ += got ? 1 : 0;
    return got;
  }
  int promoted_ = 0;

 private:
  AshaOptions options_;
  AshaScheduler kept_;
  int calls_ = 0;
};

TEST(AshaPromotion, KeptWaitingListsEqualAScanFromScratch) {
  for (const int64_t brackets : {1, 3}) {
    AshaOptions o{/*eta=*/3, /*min_resource=*/1, /*max_resource=*/27, /*promotion=*/true, brackets};
    CheckedPromotions s(o);
    testing::Simulate(s, 400, 5, 27, /*maximize=*/brackets == 1);
    EXPECT_GT(s.promoted_, 10);
  }
}

// A trial promoted from a rung but still at the rung's epoch (running, no new report yet) is
// passed over, not forgotten: if it is paused there again (its worker was preempted and the
// re-report of that epoch paused it), it is promoted again.
TEST_F(AshaExample, ATrialStillAtTheRungIsPassedOverNotDropped) {
  study.max_resource = 9;
  const AshaOptions o{/*eta=*/3, /*min_resource=*/1, /*max_resource=*/9, /*promotion=*/true};
  AshaScheduler s(o);
  Report(s, 0, 1, 0.9);
  Report(s, 1, 1, 0.8);
  Report(s, 2, 1, 0.1);  // n=3: the top 1 is t0
  ASSERT_EQ(s.NextPromotion(study), 0);
  study.trials[0].state = TrialState::kRunning;  // resumed, no report yet
  Report(s, 3, 1, 0.2);
  Report(s, 4, 1, 0.3);
  Report(s, 5, 1, 0.05);                 // n=6: the top 2 are t0, t1
  EXPECT_EQ(s.NextPromotion(study), 1);  // passes over t0, still running at epoch 1
  study.trials[1].state = TrialState::kRunning;
  study.trials[0].state = TrialState::kPaused;  // paused at epoch 1 again
  EXPECT_EQ(ScanForPromotion(s, o, study), 0);
  EXPECT_EQ(s.NextPromotion(study), 0);
}

// A coordinator's history with what the simulation above never does: several workers, values
// that trend (later trials better, so each rung's cutoff keeps moving), ties and NaNs, paused
// trials stopped by the user and running ones failing, and now and then the scheduler handed an
// empty study (its tables are cleared) and then this one again (rebuilt from the whole history
// in one Sync, as on a restart). Every NextPromotion is checked against the scan from scratch,
// and every OnReport against a scheduler built fresh on the same view.
TEST(AshaPromotion, CandidateHeapsEqualAScanOnAChurningHistory) {
  for (const int64_t brackets : {1, 3}) {
    const AshaOptions o{/*eta=*/3, /*min_resource=*/1, /*max_resource=*/27, /*promotion=*/true,
                        brackets};
    AshaScheduler kept(o);
    StudyView study;
    study.max_resource = 27;
    Rng rng(static_cast<uint64_t>(brackets) + 40);
    // Values that trend: later trials better, so each rung's cutoff keeps moving.
    const auto report = [&](TrialView& t) {
      const int64_t e = t.LastResource() + 1;
      const double quality = 0.0001 * static_cast<double>(t.number) + 0.2 * rng.Uniform();
      t.values[e] = rng.Below(50) == 0 ? NAN : std::round(quality * e * 40) / 40;
    };
    const auto asked = [&](int step, std::optional<int64_t> got) {
      EXPECT_EQ(got, ScanForPromotion(kept, o, study)) << "step " << step;
      return got == ScanForPromotion(kept, o, study);
    };
    const auto decided = [&](int step, const TrialView& t, const Decision& d) {
      if (step % 5 != 0) return true;
      AshaScheduler fresh(o);
      const Decision f = fresh.OnReport(study, t);
      EXPECT_EQ(f.action, d.action) << "step " << step;
      EXPECT_EQ(f.reason, d.reason);
      return f.action == d.action && f.reason == d.reason;
    };
    const int promoted = testing::Churn(kept, study, rng, 6000, 1500, 100, report, asked, decided);
    EXPECT_GT(promoted, 20) << brackets;
  }
}

}  // namespace asha_scheduler_test
}  // namespace sift::search

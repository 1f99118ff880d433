// Multi-objective TPE keeps the ended points and the ranks of the best of them across asks
// (RankedPoints). These random studies grow one trial at a time, with ties, values that are not
// numbers, constraints violated or not yet reported, and trials that pause, resume, diverge and
// fail; at every step the kept answers are checked against the order computed from the whole view
// and against a searcher built fresh on it (a restarted coordinator).
#include "search/multi/ranked_points.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/multi/motpe_searcher.h"
#include "search/rng.h"
#include "tests/search/history_sim.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace ranked_points_test {

constexpr int64_t kEpochs = 5;

// ChurningStudy with several objectives and a constraint: `objectives` of val_accuracy (maximized),
// dollars, latency and params; size <= 1. Values lie on a coarse grid so that points tie and
// fronts are wide, now and then not a number; the constraint is sometimes not reported, sometimes
// violated by 0.5 or by 1. `chained`: the objectives move together (a little noise aside), so
// that fronts are thin and the good set spans many ranks, deeper as the study grows; and no trial
// pauses, so no point leaves the ranks.
class RandomStudy : public testing::ChurningStudy {
 public:
  RandomStudy(const SearchSpace& space, size_t objectives, uint64_t seed, bool chained = false)
      : ChurningStudy(space, seed, kEpochs) {
    StudyView& s = study();
    s.objectives = {
        {"val_accuracy", true}, {"dollars", false}, {"latency", false}, {"params", false}};
    s.objectives.resize(objectives);
    s.objective = s.objectives[0];
    s.constraints = {{"size", 1.0, true}};
    SetPauses(!chained);
    SetReporter([objectives, chained](TrialView& t, int64_t e, Rng& rng) {
      auto value = [&] { return rng.Below(30) == 0 ? NAN : static_cast<double>(rng.Below(7)) / 2; };
      const double u = static_cast<double>(rng.Below(1000)) / 100;
      t.values[e] = chained ? u : value();
      t.more_values.resize(objectives - 1);
      for (CurveValues& curve : t.more_values) {
        curve[e] = chained ? -u + static_cast<double>(rng.Below(3)) / 10 : value();  // minimized
      }
      t.constraint_values.resize(1);
      const uint64_t c = rng.Below(6);  // 0-1: not reported; 2: violated by 0.5; 3: by 1
      if (c >= 2) t.constraint_values[0][e] = c == 2 ? 1.5 : c == 3 ? 2.0 : 0.5;
    });
  }
};

// What MO-TPE's bad set is, read off the whole view: every other ended trial and, with constant
// liar, the running and pending ones, the newest max_above of them.
std::vector<int64_t> BadFromScratch(const StudyView& study, const std::vector<int64_t>& good,
                                    const TpeOptions& o) {
  std::vector<int64_t> bad;
  for (const TrialView& t : study.trials) {
    const bool ended = EndedPoint(study, t).has_value();
    const bool liar = t.state == TrialState::kRunning || t.state == TrialState::kPending;
    if ((ended && std::find(good.begin(), good.end(), t.number) == good.end()) || liar) {
      bad.push_back(t.number);
    }
  }
  const auto max_above = static_cast<size_t>(o.max_above);
  if (bad.size() > max_above)
    bad.erase(bad.begin(), bad.end() - static_cast<std::ptrdiff_t>(max_above));
  return bad;
}

// The pool is every feasible point with finite values whose rank is at most its depth, with that
// rank (ranks read off the whole view).
void ExpectPoolExact(const RankedPoints& kept, const std::vector<TrialPoint>& points) {
  Points values;
  std::vector<int64_t> trials;
  for (const TrialPoint& p : points) {
    if (p.feasible() && AllFinite(p.values)) {
      values.push_back(p.values);
      trials.push_back(p.trial);
    }
  }
  const std::vector<int> ranks = NonDominatedRanks(values);
  std::vector<std::pair<int64_t, int>> want;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] <= kept.depth()) want.emplace_back(trials[i], ranks[i]);
  }
  EXPECT_EQ(kept.Pool(), want) << "depth " << kept.depth();
}

struct TopCase {
  size_t objectives;
  uint64_t seed;
  int steps;
  bool chained = false;  // thin fronts, no pauses (RandomStudy)
  // Only the k a searcher asks, ceil(0.1 n), which grows with the study; otherwise small and
  // large ones mixed (a small k lets the pool shrink, a large one makes it deepen).
  bool growing_k = false;
};

void ExpectTopAsFromScratch(const TopCase& c, int slack) {
  const SearchSpace space = testing::OneDimSpace();
  RandomStudy sim(space, c.objectives, c.seed, c.chained);
  RankedPoints kept(slack);
  Rng rng(c.seed + 100);
  for (int step = 0; step < c.steps; ++step) {
    sim.Step({{"x", 0.0}});
    const StudyView& study = sim.study();
    kept.Sync(study);
    const std::vector<TrialPoint> points = EndedPoints(study);
    ASSERT_EQ(kept.size(), points.size()) << "step " << step;
    const int64_t n = static_cast<int64_t>(points.size());
    std::vector<int64_t> ks = {(n + 9) / 10};
    if (!c.growing_k) {
      ks.push_back(static_cast<int64_t>(rng.Below(4)));
      ks.push_back(static_cast<int64_t>(rng.Below(30)));
      if (rng.Below(10) == 0) ks.push_back(static_cast<int64_t>(rng.Below(n + 3)));
    }
    for (int64_t k : ks) {
      ASSERT_EQ(kept.Top(k), ConstrainedTopTrials(points, k))
          << c.objectives << " objectives, seed " << c.seed << ", slack " << slack
          << (c.chained ? ", chained" : "") << ", step " << step << ", k " << k;
      ExpectPoolExact(kept, points);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(RankedPoints, TopIsTheConstrainedTopOfTheWholeView) {
  const TopCase cases[] = {{2, 1, 400},
                           {2, 2, 400},
                           {2, 3, 400, false, true},
                           {3, 1, 250},
                           {3, 2, 250, false, true},
                           {4, 1, 150},
                           {2, 4, 400, true},
                           {2, 5, 400, true, true},
                           {3, 3, 250, true},
                           {3, 4, 250, true, true}};
  // Slack 0 keeps the pool no deeper than the top needs: every rank it holds is read.
  for (int slack : {0, 1, 4}) {
    for (const TopCase& c : cases) ExpectTopAsFromScratch(c, slack);
  }
}

TEST(RankedPoints, AnotherStudyStartsOver) {
  const SearchSpace space = testing::OneDimSpace();
  RandomStudy a(space, 2, 5), b(space, 2, 6);
  for (int i = 0; i < 60; ++i) {
    a.Step({{"x", 0.0}});
    b.Step({{"x", 1.0}});
  }
  RankedPoints kept;
  kept.Sync(a.study());
  ASSERT_EQ(kept.Top(6), ConstrainedTopTrials(EndedPoints(a.study()), 6));
  // The same objectives with another constraint: every point's violation may differ.
  StudyView view = b.study();
  kept.Sync(view);
  EXPECT_EQ(kept.Top(6), ConstrainedTopTrials(EndedPoints(view), 6));
  view.constraints[0].bound = 1.7;
  kept.Sync(view);
  EXPECT_EQ(kept.Top(6), ConstrainedTopTrials(EndedPoints(view), 6));
  EXPECT_EQ(kept.Find(1000), nullptr);
}

// A searcher kept across asks suggests exactly what one built on each view does, from the good
// and bad sets read off the whole view.
void ExpectKeptSearcherAsFresh(size_t objectives, uint64_t seed, int steps, TpeOptions o) {
  const SearchSpace space = testing::MixedSpace();
  RandomStudy sim(space, objectives, seed);
  MoTpeSearcher kept(o);
  Rng rng(seed);
  for (int step = 0; step < steps; ++step) {
    const StudyView& study = sim.study();
    const std::vector<Params> asked = kept.Suggest(study, 2);
    MoTpeSearcher fresh(o);
    ASSERT_EQ(asked, fresh.Suggest(study, 2))
        << objectives << " objectives, seed " << seed << ", step " << step;
    const auto [good, good_weights] = kept.GoodTrials(study);
    std::vector<int64_t> want = ConstrainedTopTrials(
        EndedPoints(study),
        std::min<int64_t>(static_cast<int64_t>(std::ceil(o.gamma * EndedPoints(study).size())),
                          o.gamma_max));
    std::sort(want.begin(), want.end());
    ASSERT_EQ(good, want) << "step " << step;
    ASSERT_EQ(kept.BadTrials(study).first, BadFromScratch(study, good, o)) << "step " << step;
    sim.Step(asked[rng.Below(2)]);
  }
}

TEST(MoTpeSearcher, AKeptSearcherSuggestsWhatAFreshOneDoes) {
  TpeOptions o;
  o.n_startup = 5;
  o.max_above = 40;  // reached: the bad set is cut to the newest
  ExpectKeptSearcherAsFresh(2, 1, 250, o);
  ExpectKeptSearcherAsFresh(3, 2, 150, o);
  o.gamma = 0.3;  // a deeper good set: several ranks, the cut one wider
  o.gamma_max = 40;
  ExpectKeptSearcherAsFresh(2, 3, 200, o);
}

}  // namespace ranked_points_test
}  // namespace sift::search

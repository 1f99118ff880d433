#include "search/multi/nsga2_searcher.h"

#include <gtest/gtest.h>

#include <set>

#include "search/rng.h"
#include "tests/search/history_sim.h"
#include "tests/search/multi/mo_views.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace nsga2_searcher_test {

using testing::AddTrial;
using testing::MoStudy;

Nsga2Options Population(int64_t n) {
  Nsga2Options o;
  o.population = n;
  return o;
}

TEST(Nsga2Searcher, ParentsSurviveFromParentsAndTheLastGeneration) {
  StudyView study = MoStudy();
  AddTrial(study, TrialState::kCompleted, {{0.5, 5, 0}});  // generation 0
  AddTrial(study, TrialState::kCompleted, {{0.6, 4, 0}});  // dominates 0
  AddTrial(study, TrialState::kCompleted, {{0.9, 1, 2}});  // generation 1: best, infeasible
  AddTrial(study, TrialState::kCompleted, {{0.4, 6, 0}});  // dominated by 0 and 1
  Nsga2Searcher s(Population(2));
  EXPECT_EQ(s.Parents(study, 0), (std::vector<int64_t>{}));
  EXPECT_EQ(s.Parents(study, 1), (std::vector<int64_t>{1, 0}));
  // Feasible trials rank before the infeasible one, however good its objectives.
  EXPECT_EQ(s.Parents(study, 2), (std::vector<int64_t>{1, 0}));
  study.constraints.clear();
  EXPECT_EQ(s.Parents(study, 2), (std::vector<int64_t>{2, 1}));
  // A running trial of generation 1 is not a parent yet.
  study.trials[2].state = TrialState::kRunning;
  EXPECT_EQ(s.Parents(study, 2), (std::vector<int64_t>{1, 0}));
}

TEST(Nsga2Searcher, ChildrenStayInTheSpace) {
  const SearchSpace space = testing::MixedSpace();
  Nsga2Searcher s(Population(8));
  int children = 0, repeats = 0;
  std::set<Params> seen;
  const StudyView study = testing::RunStudy(
      s, space, 80, 3,
      [&](const StudyView& view, const Params& p) {
        EXPECT_EQ(space.Check(p), "") << ToString(p);
        children += view.trials.size() >= 8 ? 1 : 0;
        repeats += seen.insert(p).second ? 0 : 1;
      },
      /*several=*/true);
  EXPECT_EQ(children, 72);
  // A child that copies a parent is drawn again: few configurations run twice.
  EXPECT_LE(repeats, 4);
  EXPECT_EQ(s.Parents(study, 9).size(), 8u);
}

TEST(Nsga2Searcher, ParallelAsksDifferAndEachIsItsTrialNumbers) {
  const SearchSpace space = testing::MixedSpace();
  Nsga2Searcher s(Population(6));
  StudyView study = testing::RunStudy(
      s, space, 12, 4, [](const StudyView&, const Params&) {}, true);
  const std::vector<Params> batch = s.Suggest(study, 3);
  EXPECT_EQ(std::set<Params>(batch.begin(), batch.end()).size(), 3u);
  // The second of the batch is what trial 13 gets once trial 12 is running.
  TrialView running;
  running.number = 12;
  running.params = batch[0];
  running.state = TrialState::kRunning;
  study.trials.push_back(running);
  EXPECT_EQ(s.Suggest(study, 1)[0], batch[1]);
}

// The parents of `generation` as NSGA-II defines them: every generation replayed from the first
// over the ended points of the whole view (what the searcher computed at each ask before it kept
// its generations).
std::vector<TrialPoint> ReplayParents(const StudyView& study, int64_t population,
                                      int64_t generation) {
  const std::vector<TrialPoint> ended = EndedPoints(study);
  std::vector<TrialPoint> pool;
  size_t next = 0;
  for (int64_t g = 0; g < generation; ++g) {
    for (; next < ended.size() && ended[next].trial < (g + 1) * population; ++next) {
      pool.push_back(ended[next]);
    }
    Points values;
    for (const TrialPoint& p : pool) values.push_back(p.values);
    std::vector<TrialPoint> survivors;
    for (int i : Nsga2Survivors(values, ConstrainedRanks(pool), static_cast<size_t>(population))) {
      survivors.push_back(pool[static_cast<size_t>(i)]);
    }
    pool = std::move(survivors);
  }
  return pool;
}

// A churning history (history_sim.h: trials pause, resume, stop, diverge and fail, old ones now
// and then long after) with `objectives` objectives on a coarse grid, so that points tie, now and
// then not a number, and the constraint size <= 1 now violated, now unreported.
class RandomStudy : public testing::ChurningStudy {
 public:
  RandomStudy(const SearchSpace& space, size_t objectives, uint64_t seed)
      : ChurningStudy(space, seed, /*epochs=*/4) {
    StudyView& s = study();
    s.objectives = {{"val_accuracy", true}, {"dollars", false}, {"latency", false}};
    s.objectives.resize(objectives);
    s.objective = s.objectives[0];
    s.constraints = {{"size", 1.0, true}};
    SetReporter([objectives](TrialView& t, int64_t e, Rng& rng) {
      const auto value = [&] {
        return rng.Below(25) == 0 ? NAN : static_cast<double>(rng.Below(6)) / 2;
      };
      t.values[e] = value();
      t.more_values.resize(objectives - 1);
      for (CurveValues& curve : t.more_values) curve[e] = value();
      t.constraint_values.resize(1);
      if (rng.Below(4) == 0) t.constraint_values[0][e] = rng.Below(2) == 0 ? 0.5 : 1.5;
    });
  }
};

std::string Describe(const std::vector<TrialPoint>& points) {
  std::string out;
  for (const TrialPoint& p : points) out += std::to_string(p.trial) + " ";
  return out;
}

// Kept generations answer the replay of the whole view for each of `generations`.
void ExpectKeptAsReplayed(Nsga2Generations& kept, const StudyView& study, int64_t population,
                          const std::vector<int64_t>& generations, const std::string& where) {
  kept.Sync(study);
  for (int64_t g : generations) {
    const Nsga2Generations::Parents& got = kept.Get(g);
    const std::vector<TrialPoint> want = ReplayParents(study, population, g);
    ASSERT_EQ(Describe(got.points), Describe(want)) << where << ", generation " << g;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got.points[i].values, want[i].values) << where << ", generation " << g;
      ASSERT_EQ(got.points[i].violation, want[i].violation) << where << ", generation " << g;
    }
    ASSERT_EQ(got.ranks, ConstrainedRanks(want)) << where << ", generation " << g;
  }
}

// Generations 0 to `last`.
std::vector<int64_t> UpTo(int64_t last) {
  std::vector<int64_t> out;
  for (int64_t g = 0; g <= last; ++g) out.push_back(g);
  return out;
}

TEST(Nsga2Generations, KeptParentsAreTheReplayOfTheWholeView) {
  const SearchSpace space = testing::OneDimSpace();
  for (size_t objectives : {1, 2, 3}) {
    for (int64_t population : {2, 3, 5}) {
      const uint64_t seed = objectives * 10 + static_cast<uint64_t>(population);
      RandomStudy sim(space, objectives, seed);
      Nsga2Generations kept(population);
      Rng rng(seed);
      for (int step = 0; step < 150; ++step) {
        sim.Step({{"x", 0.0}});
        // The generation asked, the next (a batch crossing into it) and an older one.
        const auto now = static_cast<int64_t>(sim.study().trials.size()) / population;
        const auto old = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(now + 1)));
        ExpectKeptAsReplayed(kept, sim.study(), population, {now, now + 1, old},
                             std::to_string(objectives) + " objectives, population " +
                                 std::to_string(population) + ", step " + std::to_string(step));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// A paused trial of generation 0 reports again: the same objectives, now infeasible; then it
// resumes (its point goes) and completes. Each time every later generation's parents change.
TEST(Nsga2Generations, ALateChangeInAnOldGenerationIsReplayed) {
  StudyView study = testing::MoStudy();
  AddTrial(study, TrialState::kCompleted, {{0.5, 5, 0}});
  AddTrial(study, TrialState::kPaused, {{0.9, 1, 0}});  // the best, so far feasible
  for (int i = 0; i < 6; ++i) {
    AddTrial(study, TrialState::kCompleted, {{0.1 * i, 3 - 0.2 * i, 0}});
  }
  Nsga2Generations kept(2);
  ExpectKeptAsReplayed(kept, study, 2, UpTo(5), "paused");
  ASSERT_EQ(kept.Get(4).points[0].trial, 1);
  TrialView& late = study.trials[1];
  late.values[2] = 0.9;
  late.more_values[0][2] = 1;
  late.constraint_values[0][2] = 3;
  ExpectKeptAsReplayed(kept, study, 2, UpTo(5), "infeasible");
  ASSERT_NE(kept.Get(4).points[0].trial, 1);
  late.state = TrialState::kRunning;
  ExpectKeptAsReplayed(kept, study, 2, UpTo(5), "resumed");
  late.values[3] = 0.95;
  late.more_values[0][3] = 0.5;
  late.constraint_values[0][3] = 0;
  late.state = TrialState::kCompleted;
  ExpectKeptAsReplayed(kept, study, 2, UpTo(5), "completed");
  ASSERT_EQ(kept.Get(4).points[0].trial, 1);
}

TEST(Nsga2Generations, AnotherStudyOrOtherGoalsStartOver) {
  const SearchSpace space = testing::OneDimSpace();
  RandomStudy a(space, 2, 5), b(space, 2, 6);
  for (int i = 0; i < 90; ++i) a.Step({{"x", 0.0}});
  for (int i = 0; i < 60; ++i) b.Step({{"x", 1.0}});
  // A late trial of a's better than any other: it survives from its generation on, where a view
  // of b's kept as a's would still have it.
  StudyView view = a.study();
  TrialView& best = view.trials[85];
  best.state = TrialState::kCompleted;
  best.values = {{1, 10.0}};
  best.more_values = {{{1, -10.0}}};
  best.constraint_values = {{}};  // never reported: feasible
  Nsga2Generations kept(4);
  // Past each view's end too, where the shorter view has no trials.
  const std::vector<int64_t> all = UpTo(25);
  ExpectKeptAsReplayed(kept, view, 4, all, "a");
  ASSERT_EQ(kept.Get(25).points[0].trial, 85);
  ExpectKeptAsReplayed(kept, b.study(), 4, all, "b, shorter");
  ExpectKeptAsReplayed(kept, view, 4, all, "a again");
  // The same trials under another constraint or another direction: every point may differ.
  view.constraints[0].bound = 0.2;
  ExpectKeptAsReplayed(kept, view, 4, all, "a, size <= 0.2");
  view.objectives[1].maximize = true;
  ExpectKeptAsReplayed(kept, view, 4, all, "a, dollars maximized");
  // Another seed, as long, with nothing ended yet: no parents at all.
  ++view.seed;
  for (TrialView& t : view.trials) t.state = TrialState::kRunning;
  ExpectKeptAsReplayed(kept, view, 4, all, "nothing ended");
}

// A searcher kept across asks suggests exactly what one built on each view does (a restarted
// coordinator), batches crossing into the next generation included, and then on another study's
// shorter view.
TEST(Nsga2Searcher, AKeptSearcherSuggestsWhatAFreshOneDoes) {
  const SearchSpace space = testing::MixedSpace();
  const auto expect_as_fresh = [](Nsga2Searcher& kept, const StudyView& study, int count,
                                  const std::string& where) {
    const std::vector<Params> asked = kept.Suggest(study, count);
    Nsga2Searcher fresh(Population(4));
    EXPECT_EQ(asked, fresh.Suggest(study, count)) << where;
    return asked;
  };
  for (size_t objectives : {2, 3}) {
    RandomStudy sim(space, objectives, objectives), other(space, objectives, objectives + 10);
    Nsga2Searcher kept(Population(4));
    Rng rng(objectives);
    for (int step = 0; step < 200; ++step) {
      const int count = 1 + static_cast<int>(rng.Below(3));
      const std::string where =
          std::to_string(objectives) + " objectives, step " + std::to_string(step);
      sim.Step(expect_as_fresh(kept, sim.study(), count, where)[0]);
      if (step < 120) other.Step(sim.study().trials.back().params);
      if (::testing::Test::HasFailure()) return;
    }
    expect_as_fresh(kept, other.study(), 3, "another study");
    expect_as_fresh(kept, sim.study(), 3, "the first again");
  }
}

}  // namespace nsga2_searcher_test
}  // namespace sift::search

#include "search/multi/nsga2_searcher.h"

#include <gtest/gtest.h>

#include <set>

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

}  // namespace nsga2_searcher_test
}  // namespace sift::search

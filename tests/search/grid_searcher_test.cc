#include "search/grid_searcher.h"

#include <gtest/gtest.h>

#include <set>

#include "search/factory.h"
#include "search/rng.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace grid_searcher_test {

TEST(GridSearcher, EnumeratesConditionalGridOnceThenStops) {
  // optimizer {sgd, adam, rmsprop} x layers 1..4; momentum (5 floats) only under sgd; warmup
  // (0..5, 6 ints) only under adam: 4 * (5 + 6 + 1) = 48 points, and lr adds 5 more each.
  const SearchSpace space = testing::MixedSpace();
  GridSearcher grid(space, {});
  ASSERT_EQ(grid.size(), 5u * 4u * 12u);
  std::set<Params> seen;
  StudyView study = testing::RunStudy(grid, space, 1000, 3, [&](const StudyView&, const Params& p) {
    EXPECT_EQ(space.Check(p), "");
    EXPECT_TRUE(seen.insert(p).second) << "repeated " << ToString(p);
  });
  EXPECT_EQ(study.trials.size(), 240u);
  EXPECT_TRUE(grid.Suggest(study, 1).empty());
}

TEST(GridSearcher, FloatsIncludeTheBoundsAndLogPointsAreGeometric) {
  const SearchSpace space({testing::FloatParam("lr", 1e-4, 1e-0, Scale::kLog)});
  GridSearcher grid(space, {/*points_per_float=*/5, 10, /*shuffle=*/false});
  StudyView study;
  study.space = &space;
  auto all = grid.Suggest(study, 10);
  ASSERT_EQ(all.size(), 5u);
  const double expect[] = {1e-4, 1e-3, 1e-2, 1e-1, 1.0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(std::get<double>(all[i].at("lr")), expect[i], 1e-12);
}

TEST(GridSearcher, TooLargeIsAnError) {
  std::vector<ParamSpec> params;
  for (int i = 0; i < 8; ++i) params.push_back(testing::FloatParam("x" + std::to_string(i), 0, 1));
  std::vector<std::string> errors;
  EXPECT_EQ(MakeSearcher("grid", {}, SearchSpace(params), &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("type: grid has more than 100000 points", 0), 0u);
}

// 16 yes/no parameters: 65,536 points, under the cap. The grid once held them as maps (about
// 200 MB for `sift validate`); the points must still all be there, each once.
TEST(GridSearcher, SixteenBinaryParametersMakeEveryPointOnce) {
  std::vector<ParamSpec> params;
  for (int i = 0; i < 16; ++i) {
    params.push_back(
        testing::CatParam("b" + std::to_string(i), {std::string("no"), std::string("yes")}));
  }
  const SearchSpace space(params);
  GridSearcher grid(space, {});
  ASSERT_EQ(grid.error(), "");
  ASSERT_EQ(grid.size(), 65536u);
  StudyView study;
  study.space = &space;
  const std::vector<Params> all = grid.Suggest(study, 70000);
  ASSERT_EQ(all.size(), 65536u);
  std::vector<bool> seen(65536);  // each point as a 16-bit mask of its "yes" answers
  for (const Params& p : all) {
    size_t mask = 0;
    for (int i = 0; i < 16; ++i) {
      if (std::get<std::string>(p.at("b" + std::to_string(i))) == "yes") mask |= size_t{1} << i;
    }
    EXPECT_FALSE(seen[mask]) << "repeated " << ToString(p);
    seen[mask] = true;
  }
  // One more parameter doubles it past the cap: refused.
  params.push_back(testing::CatParam("b16", {std::string("no"), std::string("yes")}));
  EXPECT_NE(GridSearcher(SearchSpace(params), {}).error(), "");
}

}  // namespace grid_searcher_test
}  // namespace sift::search

namespace sift::search {
namespace grid_searcher_test {

// The searcher keeps what it learned across asks (the seed's order, the trials' parameters, the
// taken prefix); a fresh searcher per ask recomputes everything, as every ask did before. On
// random histories (its own suggestions, off-grid and repeated points, several per ask, another
// study's shorter history, another seed) both must answer the same.
TEST(GridSearcher, KeptStateAnswersAsRecomputingFromTheWholeHistory) {
  const SearchSpace space = testing::MixedSpace();
  GridSearcher kept(space, {});
  Rng rng(11);
  StudyView study;
  study.space = &space;
  study.seed = 3;
  for (int step = 0; step < 400; ++step) {
    if (step == 150) study.trials.resize(20);  // another study, shorter
    if (step == 300) study.seed = 4;           // another order
    const int count = 1 + static_cast<int>(rng.Below(4));
    GridSearcher fresh(space, {});
    const std::vector<Params> want = fresh.Suggest(study, count);
    ASSERT_EQ(kept.Suggest(study, count), want) << "step " << step;
    TrialView t;
    t.number = static_cast<int64_t>(study.trials.size());
    const uint64_t kind = rng.Below(4);
    if (kind == 0 || want.empty()) {
      t.params = space.Sample(rng);  // off the grid
    } else if (kind == 1 && !study.trials.empty()) {
      t.params = study.trials[rng.Below(study.trials.size())].params;  // a repeat
    } else {
      t.params = want[rng.Below(want.size())];
    }
    study.trials.push_back(std::move(t));
  }
}

}  // namespace grid_searcher_test
}  // namespace sift::search

// Enqueued configurations (Optuna's enqueue_trial): tried first and in order, completed by a
// seeded draw where partial, then the wrapped searcher; bad ones named.
#include "search/enqueued_searcher.h"

#include <gtest/gtest.h>

#include "search/random_searcher.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace enqueued_searcher_test {

StudyView Empty(const SearchSpace& space, uint64_t seed = 3) {
  StudyView v;
  v.space = &space;
  v.seed = seed;
  return v;
}

void Add(StudyView* v, const Params& p) {
  TrialView t;
  t.number = static_cast<int64_t>(v->trials.size());
  t.params = p;
  t.state = TrialState::kCompleted;
  t.values[1] = 0.5;
  v->trials.push_back(t);
}

TEST(EnqueuedSearcher, EnqueuedFirstInOrderThenTheWrappedSearcher) {
  const SearchSpace space = testing::MixedSpace();
  const Params whole = {
      {"lr", 0.01}, {"layers", int64_t{2}}, {"optimizer", std::string("sgd")}, {"momentum", 0.9}};
  const Params partial = {{"optimizer", std::string("adam")}};
  EnqueuedSearcher s({whole, partial}, std::make_unique<RandomSearcher>());
  StudyView v = Empty(space);
  const auto first = s.Suggest(v, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], whole);
  Add(&v, first[0]);
  const Params second = s.Suggest(v, 1).at(0);
  EXPECT_EQ(second.at("optimizer"), ParamValue(std::string("adam")));
  EXPECT_EQ(space.Check(second), "");
  EXPECT_EQ(second.count("warmup"), 1u);  // active under adam: drawn
  EXPECT_EQ(second.count("momentum"), 0u);
  // The completion is the same whenever it is asked for (a restarted coordinator's replay).
  EXPECT_EQ(EnqueuedSearcher::Completed(space, partial, 3, 1), second);
  EXPECT_NE(EnqueuedSearcher::Completed(space, partial, 4, 1), second);
  Add(&v, second);
  // Past the list: the wrapped searcher's suggestion for trial 2.
  RandomSearcher plain;
  EXPECT_EQ(s.Suggest(v, 1), plain.Suggest(v, 1));
}

TEST(EnqueuedSearcher, ABatchAcrossTheEndOfTheListNumbersTheRestAfterIt) {
  const SearchSpace space = testing::MixedSpace();
  const Params one = {{"lr", 0.001}, {"layers", int64_t{1}}, {"optimizer", std::string("rmsprop")}};
  EnqueuedSearcher s({one}, std::make_unique<RandomSearcher>());
  StudyView v = Empty(space);
  const auto batch = s.Suggest(v, 3);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[0], one);
  // Trials 1 and 2 are the random searcher's trials 1 and 2, not its trial 0 again.
  StudyView after = v;
  Add(&after, one);
  RandomSearcher plain;
  EXPECT_EQ(batch[1], plain.Suggest(after, 1).at(0));
  for (const auto& p : batch) EXPECT_EQ(space.Check(p), "");
  EXPECT_NE(batch[1], batch[2]);
}

TEST(EnqueuedSearcher, BadConfigurationsAreNamed) {
  const SearchSpace space = testing::MixedSpace();
  EXPECT_EQ(CheckEnqueued(space, {{"lr", 0.01}}), "");
  EXPECT_EQ(CheckEnqueued(space, {}), "");
  EXPECT_EQ(CheckEnqueued(space, {{"lr", 5.0}}), "lr: 5 is outside [1e-05, 0.1]");
  EXPECT_EQ(CheckEnqueued(space, {{"optimizer", std::string("adam")}, {"momentum", 0.5}}),
            "momentum: set but inactive under its condition");
  EXPECT_EQ(CheckEnqueued(space, {{"depth", int64_t{3}}}),
            "depth: not a parameter of the search space");
  EXPECT_EQ(CheckEnqueued(space, {{"optimizer", std::string("lbfgs")}}),
            "optimizer: 'lbfgs' is not one of its choices");
}

}  // namespace enqueued_searcher_test
}  // namespace sift::search

#include "search/bohb_searcher.h"

#include <gtest/gtest.h>

#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace {

TEST(BohbSearcher, ModelUsesTheLargestLevelWithEnoughReports) {
  const SearchSpace space = testing::OneDimSpace();  // min_points default: 1 + 2 = 3
  StudyView study;
  study.space = &space;
  for (int i = 0; i < 10; ++i) {
    TrialView t;
    t.number = i;
    t.params = {{"x", 0.1 * i}};
    t.state = TrialState::kStopped;
    t.values[1] = 0.1 * i;
    if (i < 4) t.values[3] = 0.2 * i;  // 4 trials reached epoch 3
    if (i < 2) t.values[9] = 0.3 * i;  // only 2 reached epoch 9
    study.trials.push_back(t);
  }
  BohbSearcher bohb({});
  EXPECT_EQ(bohb.ModelLevel(study), 3);
  BohbOptions strict;
  strict.min_points = 5;
  EXPECT_EQ(BohbSearcher(strict).ModelLevel(study), 1);
}

TEST(BohbSearcher, ModelSamplesConcentrateOnGoodTrials) {
  // Good trials near x = 2.5 (unit 0.9). With random_fraction 0, every suggestion comes from the
  // KDE; tolerance: at least 80% of 50 suggestions within 1.0 of 2.5 (random: ~36%).
  const SearchSpace space = testing::OneDimSpace();
  StudyView study;
  study.space = &space;
  for (int i = 0; i < 40; ++i) {
    TrialView t;
    t.number = i;
    const double x = -2.0 + 5.0 * (i + 0.5) / 40;
    t.params = {{"x", x}};
    t.state = TrialState::kCompleted;
    t.values[1] = -(x - 2.5) * (x - 2.5);
    study.trials.push_back(t);
  }
  BohbOptions o;
  o.random_fraction = 0.0;
  BohbSearcher bohb(o);
  int near = 0;
  for (const auto& p : bohb.Suggest(study, 50)) {
    near += std::abs(std::get<double>(p.at("x")) - 2.5) < 1.0 ? 1 : 0;
  }
  EXPECT_GE(near, 40);
}

}  // namespace
}  // namespace sift::search

#include "search/bohb_searcher.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/search/history_sim.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace bohb_searcher_test {

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

TEST(LevelIndex, KeptAcrossChangesEqualsARecomputation) {
  // Against the levels recomputed from scratch over a churning history (values added, trials
  // failing, non-finite values), and after the history is swapped for a shorter one.
  const SearchSpace space = testing::MixedSpace();
  testing::ChurningStudy churn(space, 9, 6);
  StudyView& study = churn.study();
  LevelIndex index;
  Rng rng(2);
  for (int step = 0; step < 500; ++step) {
    churn.Step(space.Sample(rng));
    if (step == 350) study.trials.resize(100);
    index.Sync(study);
    std::map<int64_t, std::map<int64_t, double>> want;  // level -> trial -> score
    for (const TrialView& t : study.trials) {
      if (t.state == TrialState::kFailed) continue;
      for (const auto& [resource, value] : t.values) {
        if (std::isfinite(value)) want[resource][t.number] = study.Score(value);
      }
    }
    ASSERT_EQ(index.levels().size(), want.size()) << "step " << step;
    for (const auto& [resource, level] : index.levels()) {
      ASSERT_EQ(level.scores, want.at(resource)) << "step " << step << " level " << resource;
      std::vector<LevelIndex::Entry> ranked;
      for (const auto& [number, score] : want.at(resource)) ranked.push_back({score, number});
      std::sort(ranked.begin(), ranked.end(), LevelIndex::Better());
      ASSERT_EQ(level.ranked.size(), ranked.size());
      size_t i = 0;
      for (const LevelIndex::Entry& e : level.ranked) {
        EXPECT_EQ(e.number, ranked[i].number);
        EXPECT_EQ(e.score, ranked[i++].score);
      }
    }
  }
}

TEST(BohbSearcher, KeptAcrossAChurningHistoryEqualsAFreshSearcher) {
  // The level index and the bounded sets, kept across asks, against a searcher built fresh on
  // each view (a restarted coordinator); bounds small enough to bind.
  const SearchSpace space = testing::MixedSpace();
  BohbOptions o;
  o.min_points = 4;
  o.max_good = 6;
  o.max_bad = 20;
  BohbSearcher kept(o);
  testing::ChurningStudy churn(space, 31, 3);
  for (int i = 0; i < 300; ++i) {
    const auto p = kept.Suggest(churn.study(), 2);
    if (i % 5 == 0 || i > 280) {
      BohbSearcher fresh(o);
      ASSERT_EQ(fresh.Suggest(churn.study(), 2), p) << "ask " << i;
    }
    churn.Step(p[0]);
  }
}

TEST(BohbSearcher, GoodModelKeptUntilTheGoodTrialsChangeEqualsAFreshSearcher) {
  // The good KDEs are kept across asks while the good trials stay the same. A kept searcher
  // against a fresh one at every ask: poor new trials (the good set stays), a new best every 7th,
  // and the same history seen through a space with a wider lr range (every unit row moves, the
  // good trials do not), then back.
  const SearchSpace space_a = testing::MixedSpace(), space_b = testing::MixedSpaceWideLr();
  BohbOptions o;
  o.min_points = 4;
  o.random_fraction = 0.0;
  o.max_good = 6;  // from 40 trials on, the good set changes only with a new best
  BohbSearcher kept(o);
  StudyView study;
  study.space = &space_a;
  study.seed = 9;
  Rng rng(4);
  for (int i = 0; i < 120; ++i) {
    if (i == 80) study.space = &space_b;
    if (i == 100) study.space = &space_a;
    const auto p = kept.Suggest(study, 2);
    BohbSearcher fresh(o);
    ASSERT_EQ(fresh.Suggest(study, 2), p) << "ask " << i;
    TrialView t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.params = p[0];
    t.state = TrialState::kCompleted;
    t.values[1] = i % 7 == 0 ? 1.0 + i : -rng.Uniform();
    study.trials.push_back(t);
  }
}

TEST(BohbSearcher, ModelSetsKeptAcrossAsksEqualARecomputation) {
  // From scratch: the level's trials sorted best first, the top n_good (at most max_good) good,
  // the max_bad most recent of the rest bad, best first.
  const SearchSpace space = testing::MixedSpace();
  BohbOptions o;
  o.min_points = 4;
  o.max_good = 5;
  o.max_bad = 15;
  BohbSearcher kept(o);
  testing::ChurningStudy churn(space, 17, 3);
  Rng rng(3);
  int bound = 0;
  for (int i = 0; i < 300; ++i) {
    const StudyView& study = churn.study();
    const int64_t level = kept.ModelLevel(study);
    const auto got = kept.ModelTrials(study);
    std::vector<LevelIndex::Entry> at;
    for (const TrialView& t : study.trials) {
      auto it = t.values.find(level);
      if (t.state != TrialState::kFailed && it != t.values.end() && std::isfinite(it->second)) {
        at.push_back({study.Score(it->second), t.number});
      }
    }
    std::vector<int64_t> good, bad;
    if (level > 0) {
      std::vector<LevelIndex::Entry> ranked = at;
      std::sort(ranked.begin(), ranked.end(), LevelIndex::Better());
      const size_t n_good = std::min<size_t>(
          5, std::max<size_t>(2, static_cast<size_t>(0.15 * static_cast<double>(at.size()))));
      std::vector<LevelIndex::Entry> rest;
      for (size_t r = 0; r < ranked.size(); ++r) {
        if (r < n_good)
          good.push_back(ranked[r].number);
        else
          rest.push_back(ranked[r]);
      }
      std::sort(rest.begin(), rest.end(),
                [](const auto& a, const auto& b) { return a.number > b.number; });
      if (rest.size() > 15) {
        rest.resize(15);
        ++bound;
      }
      std::sort(rest.begin(), rest.end(), LevelIndex::Better());
      for (const auto& e : rest) bad.push_back(e.number);
    }
    ASSERT_EQ(got.first, good) << "step " << i;
    ASSERT_EQ(got.second, bad) << "step " << i;
    churn.Step(space.Sample(rng));
  }
  EXPECT_GT(bound, 100);
}

TEST(BohbSearcher, BoundsChangeNothingUntilTheyBind) {
  // Sequential full-budget trials: with at most max_good good and max_bad bad trials, the same
  // suggestions as unbounded; past that, other ones.
  const SearchSpace space = testing::MixedSpace();
  BohbOptions bounded, unbounded;
  bounded.max_good = 10;
  bounded.max_bad = 40;
  unbounded.max_good = 0;
  unbounded.max_bad = 0;
  BohbSearcher a(bounded), b(unbounded);
  int same = 0, later = 0;
  testing::RunStudy(a, space, 120, 4, [&](const StudyView& study, const Params& p) {
    const size_t n = study.trials.size();
    const size_t n_good = std::max<size_t>(2, static_cast<size_t>(0.15 * static_cast<double>(n)));
    if (n_good <= 10 && n - n_good <= 40) {
      EXPECT_EQ(b.Suggest(study, 1)[0], p) << n;
    } else {
      ++later;
      same += b.Suggest(study, 1)[0] == p ? 1 : 0;
    }
  });
  EXPECT_GT(later, 50);
  EXPECT_LT(same, later);
}

}  // namespace bohb_searcher_test
}  // namespace sift::search

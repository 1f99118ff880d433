#include "search/multi/parego_searcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "search/factory.h"
#include "search/multi/hypervolume.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace parego_searcher_test {

std::unique_ptr<Searcher> Make(const SearchSpace& space, size_t objectives,
                               const Options& options = {}) {
  std::vector<std::string> errors;
  auto s = MakeSearcher("gp", options, space, &errors, objectives);
  EXPECT_TRUE(errors.empty()) << errors.at(0);
  return s;
}

// Two minimized objectives on the unit cube, x0 the position on the front and the rest its
// distance (Zitzler, Deb and Thiele 2000).
std::array<double, 2> Zdt1(const std::vector<double>& x) {
  double s = 0;
  for (size_t i = 1; i < x.size(); ++i) s += x[i];
  const double g = 1 + 9 * s / static_cast<double>(x.size() - 1);
  return {x[0], g * (1 - std::sqrt(x[0] / g))};
}

SearchSpace Cube(int dims) {
  std::vector<ParamSpec> params;
  for (int i = 0; i < dims; ++i) {
    params.push_back(testing::FloatParam("x" + std::to_string(i), 0, 1));
  }
  return SearchSpace(params);
}

std::vector<double> Unit(const Params& p, int dims) {
  std::vector<double> x;
  for (int i = 0; i < dims; ++i) x.push_back(std::get<double>(p.at("x" + std::to_string(i))));
  return x;
}

StudyView Zdt1Study(const SearchSpace& space, uint64_t seed) {
  StudyView study;
  study.space = &space;
  study.seed = seed;
  study.objectives = {{"f1", false}, {"f2", false}};
  study.objective = study.objectives[0];
  return study;
}

// Completes trial `params` with ZDT1's values and, when the study has one, the constraint's
// metric x1 (a bound on it is the constraint).
void Tell(StudyView& study, const Params& params, TrialState state = TrialState::kCompleted) {
  const int dims = static_cast<int>(study.space->size());
  TrialView t;
  t.number = static_cast<int64_t>(study.trials.size());
  t.params = params;
  t.state = state;
  const auto f = Zdt1(Unit(params, dims));
  t.values[1] = f[0];
  t.more_values = {CurveValues{{1, f[1]}}};
  if (!study.constraints.empty()) t.constraint_values = {CurveValues{{1, Unit(params, dims)[1]}}};
  study.trials.push_back(t);
}

// ZDT1's hypervolume against (1.1, 11) after `asks` sequential asks.
double Zdt1Volume(const std::string& type, const SearchSpace& space, uint64_t seed, int asks) {
  std::vector<std::string> errors;
  auto s = MakeSearcher(type, {}, space, &errors, 2);
  StudyView study = Zdt1Study(space, seed);
  Points oriented;
  for (int i = 0; i < asks; ++i) {
    const Params p = s->Suggest(study, 1).at(0);
    Tell(study, p);
    oriented.push_back({-study.trials.back().values.at(1), -study.trials.back().more_values[0][1]});
  }
  return Hypervolume(oriented, {-1.1, -11.0});
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(ParegoSearcher, TheFactoryBuildsItForGpWithSeveralObjectives) {
  const SearchSpace space = Cube(3);
  EXPECT_NE(dynamic_cast<ParegoSearcher*>(Make(space, 2).get()), nullptr);
  EXPECT_EQ(dynamic_cast<ParegoSearcher*>(Make(space, 1).get()), nullptr);
  EXPECT_NE(dynamic_cast<ParegoSearcher*>(Make(space, 3, {{"max_points", int64_t{20}}}).get()),
            nullptr);
  std::vector<std::string> errors;
  EXPECT_EQ(MakeSearcher("gp", {{"max_point", int64_t{20}}}, space, &errors, 2), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("max_point: unknown option; did you mean 'max_points'?", 0), 0u)
      << errors[0];
  EXPECT_FALSE(Make(space, 2)->SetPriors(Priors{}));
}

TEST(ParegoSearcher, BeatsRandomSearchOnZdt1) {
  const SearchSpace space = Cube(6);
  std::vector<double> parego, random;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    parego.push_back(Zdt1Volume("gp", space, seed, 60));
    random.push_back(Zdt1Volume("random", space, seed, 60));
  }
  const double random_median = Median(random);
  EXPECT_GT(Median(parego), random_median);
  for (double v : parego) EXPECT_GT(v, random_median);
}

// A cache kept across asks must not hold on to a scalar: at every ask a searcher that has seen
// the whole history suggests what one built on the view alone does, while the weights change at
// every ask, a paused trial's value moves, paused trials resume, running ones end, and the model
// keeps only a few rows.
TEST(ParegoSearcher, EveryAskIsAFunctionOfTheViewAlone) {
  const SearchSpace space = Cube(3);
  const Options small = {{"max_points", int64_t{10}}, {"fit_window", int64_t{12}}};
  auto reused = Make(space, 2, small);
  StudyView study = Zdt1Study(space, 4);
  study.constraints = {{"x1", 0.1, false}};
  for (int i = 0; i < 36; ++i) {
    const std::vector<Params> batch = reused->Suggest(study, 2);
    ASSERT_EQ(batch, Make(space, 2, small)->Suggest(study, 2)) << "ask " << i;
    Tell(study, batch[0], i % 7 == 3 ? TrialState::kPaused : TrialState::kCompleted);
    if (i % 5 == 1) Tell(study, batch[1], TrialState::kRunning);
    // The first paused trial improves on f2 at its next epoch, or resumes (running: no longer
    // ended); the first running trial completes now and then.
    for (TrialView& t : study.trials) {
      if (t.state != TrialState::kPaused) continue;
      const int64_t next = t.LastResource() + 1;
      t.values[next] = t.values.rbegin()->second;
      t.more_values[0][next] = t.more_values[0].rbegin()->second * 0.9;
      t.constraint_values[0][next] = t.constraint_values[0].rbegin()->second;
      if (i % 9 == 5) t.state = TrialState::kRunning;
      break;
    }
    for (TrialView& t : study.trials) {
      if (t.state != TrialState::kRunning || i % 4 != 2) continue;
      t.state = TrialState::kCompleted;
      break;
    }
  }
}

// A running (or pending) trial is a kriging believer: the searcher does not suggest its point
// again. The same view with that trial failed instead (ignored: the same weights and candidates)
// suggests exactly that point. The front of RunStudy's two objectives lies inside the cube. Each
// view is another history (a trial that ended does not run again), so each gets a fresh searcher.
TEST(ParegoSearcher, RunningTrialsAreBelievers) {
  const SearchSpace space = Cube(3);
  auto s = Make(space, 2);
  StudyView study = testing::RunStudy(
      *s, space, 30, 2, [](const StudyView&, const Params&) {}, /*several=*/true);
  TrialView failed;
  failed.number = 30;
  failed.params = s->Suggest(study, 1)[0];
  failed.state = TrialState::kFailed;
  study.trials.push_back(failed);
  const Params alone = Make(space, 2)->Suggest(study, 1)[0];
  for (TrialState state : {TrialState::kRunning, TrialState::kPending}) {
    study.trials.back().params = alone;
    study.trials.back().state = state;
    const Params next = Make(space, 2)->Suggest(study, 1)[0];
    double distance = 0;
    for (int d = 0; d < 3; ++d) distance += std::abs(Unit(next, 3)[d] - Unit(alone, 3)[d]);
    EXPECT_GT(distance, 0.01) << ToString(alone) << " " << ToString(next);
  }
  // In one batch too: the second suggestion keeps away from the first.
  study.trials.back().state = TrialState::kFailed;
  const std::vector<Params> batch = Make(space, 2)->Suggest(study, 2);
  EXPECT_EQ(batch[0], alone);
  EXPECT_NE(batch[1], alone);
}

// Infeasible trials rank behind every feasible one: with ZDT1's best region (x1 = 0) ruled out
// by x1 >= 0.3, the searcher keeps to the feasible side; without the constraint it goes there.
TEST(ParegoSearcher, InfeasibleTrialsRankBehindFeasibleOnes) {
  const SearchSpace space = Cube(3);
  auto feasible_late = [&](bool constrained) {
    StudyView study = Zdt1Study(space, 1);
    if (constrained) study.constraints = {{"x1", 0.3, false}};
    auto s = Make(space, 2);
    int feasible = 0;
    for (int i = 0; i < 50; ++i) {
      const Params p = s->Suggest(study, 1)[0];
      feasible += i >= 25 && Unit(p, 3)[1] >= 0.3;
      Tell(study, p);
    }
    return feasible;
  };
  EXPECT_GE(feasible_late(true), 20);  // of 25
  EXPECT_LE(feasible_late(false), 10);
}

}  // namespace parego_searcher_test
}  // namespace sift::search

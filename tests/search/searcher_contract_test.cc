// The contract every searcher passes, built through the factory as the coordinator does.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "search/enqueued_searcher.h"
#include "search/factory.h"
#include "search/rng.h"
#include "tests/search/contract_coverage.h"
#include "tests/search/searcher_sim.h"

namespace sift::search {
namespace searcher_contract_test {

using testing::RunStudy;

struct SearcherCase {
  std::string label;
  std::string type;
  Options options;
  size_t objectives = 1;  // 2: the study of RunStudy(..., several), with a constraint
};
void PrintTo(const SearcherCase& c, std::ostream* os) { *os << c.label; }

// "warm_*": the searcher with priors (SetPriors). "enqueued": TPE behind three enqueued
// configurations (a partial one, an empty one, a whole one), made from whatever space the test
// uses.
std::unique_ptr<Searcher> Make(const SearcherCase& c, const SearchSpace& space) {
  std::vector<std::string> errors;
  const bool enqueued = c.type == "enqueued";
  auto s = MakeSearcher(enqueued ? "tpe" : c.type, c.options, space, &errors, c.objectives);
  EXPECT_TRUE(errors.empty()) << errors[0];
  if (c.label.rfind("warm_", 0) == 0) {
    // Priors from an earlier study on the same space: some lack the first parameter, all carry
    // one this space lacks, and their scores are on another scale.
    Priors priors;
    Rng rng(9);
    for (int i = 0; i < 12; ++i) {
      Prior p{space.Sample(rng), 100.0 + i % 5, 1};
      if (i % 3 == 0) p.params.erase(space.params().front().name);
      p.params["gone"] = 1.0;
      priors.points.push_back(std::move(p));
    }
    EXPECT_TRUE(s->SetPriors(std::move(priors)));
  }
  if (!enqueued) return s;
  const ParamSpec& first = space.params().front();
  Rng rng(5);
  return std::make_unique<EnqueuedSearcher>(
      std::vector<Params>{{{first.name, space.FromUnit(first, 0.25)}}, {}, space.Sample(rng)},
      std::move(s));
}

constexpr int kTrials = 24;

class SearcherContract : public ::testing::TestWithParam<SearcherCase> {
 protected:
  bool several() const { return GetParam().objectives > 1; }
};

TEST_P(SearcherContract, ValidSuggestionsOnEverySpace) {
  for (const SearchSpace& space :
       {testing::MixedSpace(), testing::CategoricalSpace(), testing::OneDimSpace()}) {
    auto s = Make(GetParam(), space);
    int asked = 0;
    RunStudy(
        *s, space, kTrials, 1,
        [&](const StudyView&, const Params& p) {
          EXPECT_EQ(space.Check(p), "") << ToString(p);
          ++asked;
        },
        several());
    // Only grid may run out: 6 points on the categorical space, 5 on the 1-d one.
    EXPECT_GE(asked, GetParam().type != "grid" ? kTrials : space.size() == 2 ? 6 : 5);
  }
}

TEST_P(SearcherContract, DeterministicForASeedAndRestartSafe) {
  const SearchSpace space = testing::MixedSpace();
  auto a = Make(GetParam(), space);
  std::vector<Params> first;
  RunStudy(
      *a, space, kTrials, 5,
      [&](const StudyView& study, const Params& p) {
        first.push_back(p);
        // A searcher built fresh from the history (a restarted coordinator) suggests the same.
        if (study.trials.size() % 4 == 3) {
          EXPECT_EQ(Make(GetParam(), space)->Suggest(study, 1)[0], p);
        }
      },
      several());
  auto b = Make(GetParam(), space);
  size_t i = 0;
  RunStudy(
      *b, space, kTrials, 5, [&](const StudyView&, const Params& p) { EXPECT_EQ(p, first[i++]); },
      several());
  // Another seed gives another sequence (the same instance, reused, must not leak state).
  std::set<Params> other;
  RunStudy(
      *a, space, kTrials, 6, [&](const StudyView&, const Params& p) { other.insert(p); },
      several());
  int same = 0;
  for (const auto& p : first) same += other.count(p) ? 1 : 0;
  EXPECT_LT(same, kTrials / 2);
}

TEST_P(SearcherContract, BatchesWithRunningTrialsAreValidAndDiverse) {
  const SearchSpace space = testing::MixedSpace();
  auto s = Make(GetParam(), space);
  StudyView study = RunStudy(
      *s, space, 14, 3, [](const StudyView&, const Params&) {}, several());
  // Two trials still running (no values), as the coordinator's view has them.
  for (int i = 0; i < 2; ++i) {
    TrialView t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.params = s->Suggest(study, 1)[0];
    t.state = i == 0 ? TrialState::kRunning : TrialState::kPending;
    study.trials.push_back(t);
  }
  auto batch = s->Suggest(study, 4);
  ASSERT_EQ(batch.size(), 4u);
  std::set<Params> distinct(batch.begin(), batch.end());
  EXPECT_GE(distinct.size(), 3u);
  for (const auto& p : batch) EXPECT_EQ(space.Check(p), "");
  EXPECT_EQ(s->Suggest(study, 4), batch);  // asking again changes nothing
}

TEST_P(SearcherContract, EmptyAndFailedOnlyHistories) {
  const SearchSpace space = testing::MixedSpace();
  auto s = Make(GetParam(), space);
  StudyView study = RunStudy(
      *s, space, 0, 9, [](const StudyView&, const Params&) {}, several());
  auto first = s->Suggest(study, 2);
  ASSERT_EQ(first.size(), 2u);
  for (int i = 0; i < 20; ++i) {
    TrialView t;
    t.number = i;
    t.params = s->Suggest(study, 1)[0];
    t.state = TrialState::kFailed;
    if (i % 2) t.values[1] = NAN;  // a failed trial may carry garbage
    study.trials.push_back(t);
  }
  for (const auto& p : s->Suggest(study, 3)) EXPECT_EQ(space.Check(p), "");
}

// Every case the contract runs; SearcherContractCoverage checks that each type the factory
// registers has one, so a new algorithm cannot skip the contract.
std::vector<SearcherCase> Cases() {
  return {
      SearcherCase{"random", "random", {}},
      SearcherCase{"sobol", "sobol", {}},
      SearcherCase{"grid", "grid", {}},
      SearcherCase{"tpe", "tpe", {{"n_startup", int64_t{5}}}},
      SearcherCase{"enqueued_then_tpe", "enqueued", {{"n_startup", int64_t{5}}}},
      SearcherCase{"tpe_univariate",
                   "tpe",
                   {{"n_startup", int64_t{5}}, {"multivariate", false}, {"constant_liar", false}}},
      SearcherCase{
          "tpe_optuna_multivariate",
          "tpe",
          {{"n_startup", int64_t{5}}, {"bandwidth", std::string("optuna")}, {"group", false}}},
      SearcherCase{"warm_tpe", "tpe", {{"n_startup", int64_t{8}}}},
      SearcherCase{"gp", "gp", {}},
      SearcherCase{"warm_gp", "gp", {}},
      SearcherCase{"gp_cost_aware", "gp", {{"cost_aware", true}}},
      SearcherCase{"bohb", "bohb", {{"min_points", int64_t{4}}}},
      SearcherCase{"nsga2", "nsga2", {{"population", int64_t{6}}}}};
}

TEST(SearcherContractCoverage, EveryRegisteredTypeHasACase) {
  testing::ExpectACaseForEveryType(SearcherTypes(), Cases());
}

INSTANTIATE_TEST_SUITE_P(All, SearcherContract, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<SearcherCase>& info) {
                           return info.param.label;
                         });

// The same contract with two objectives and a constraint, for every type that accepts several.
std::vector<SearcherCase> MultiObjectiveCases() {
  return {SearcherCase{"random", "random", {}, 2},
          SearcherCase{"sobol", "sobol", {}, 2},
          SearcherCase{"grid", "grid", {}, 2},
          SearcherCase{"motpe", "tpe", {{"n_startup", int64_t{5}}}, 2},
          SearcherCase{
              "motpe_univariate", "tpe", {{"n_startup", int64_t{5}}, {"multivariate", false}}, 2},
          SearcherCase{"enqueued_then_motpe", "enqueued", {{"n_startup", int64_t{5}}}, 2},
          SearcherCase{"parego", "gp", {}, 2},
          SearcherCase{"parego_few_points", "gp", {{"max_points", int64_t{8}}}, 2},
          SearcherCase{"parego_cost_aware", "gp", {{"cost_aware", true}}, 2},
          SearcherCase{"nsga2", "nsga2", {{"population", int64_t{6}}}, 2},
          SearcherCase{"nsga2_uniform",
                       "nsga2",
                       {{"population", int64_t{5}}, {"crossover", std::string("uniform")}},
                       2}};
}

TEST(SearcherContractCoverage, EveryMultiObjectiveTypeHasACase) {
  testing::ExpectACaseForEveryType(MultiObjectiveSearcherTypes(), MultiObjectiveCases());
}

INSTANTIATE_TEST_SUITE_P(MultiObjective, SearcherContract,
                         ::testing::ValuesIn(MultiObjectiveCases()),
                         [](const ::testing::TestParamInfo<SearcherCase>& info) {
                           return info.param.label;
                         });

// Every other registered type is refused with two objectives, naming the ones that work.
TEST(SearcherFactory, TypesForOneObjectiveAreRefusedWithSeveral) {
  const SearchSpace space = testing::MixedSpace();
  const int refused = testing::ExpectRefusedWithSeveral(
      SearcherTypes(), MultiObjectiveSearcherTypes(),
      "tpe (multi-objective TPE), gp (ParEGO), nsga2, random or sobol",
      [&](const std::string& type, std::vector<std::string>* errors) {
        return MakeSearcher(type, {}, space, errors, 2) != nullptr;
      });
  EXPECT_EQ(refused, 1);  // bohb
}

TEST(SearcherFactory, OptionErrorsNameTheKey) {
  const SearchSpace space = testing::MixedSpace();
  std::vector<std::string> errors;
  EXPECT_EQ(MakeSearcher("tpe", {{"n_startup", 2.5}, {"gama", 0.2}}, space, &errors), nullptr);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("n_startup: must be an integer", 0), 0u);
  EXPECT_EQ(errors[1].rfind("gama: unknown option; did you mean 'gamma'? (known: ", 0), 0u)
      << errors[1];
}

}  // namespace searcher_contract_test
}  // namespace sift::search

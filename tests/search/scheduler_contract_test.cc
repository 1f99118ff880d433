// The contract every scheduler passes, built through the factory exactly as the coordinator does.
#include <gtest/gtest.h>

#include <algorithm>

#include "search/factory.h"
#include "tests/search/contract_coverage.h"
#include "tests/search/scheduler_sim.h"

namespace sift::search {
namespace scheduler_contract_test {

using testing::Simulate;

struct SchedulerCase {
  std::string label;
  std::string type;
  Options options;
  int64_t min_resource;   // no STOP or PAUSE before this epoch
  size_t objectives = 1;  // 2: Simulate's second objective and constraint too
};

void PrintTo(const SchedulerCase& c, std::ostream* os) { *os << c.label; }

constexpr int64_t kMaxResource = 27;

std::unique_ptr<Scheduler> Make(const SchedulerCase& c, bool maximize = true) {
  std::vector<std::string> errors;
  auto s = MakeScheduler(c.type, c.options, {kMaxResource, maximize, c.objectives}, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  return s;
}

class SchedulerContract : public ::testing::TestWithParam<SchedulerCase> {};

TEST_P(SchedulerContract, DeterministicAndRestartSafe) {
  auto a = Make(GetParam());
  auto b = Make(GetParam());
  int checked = 0;
  // At every report, a scheduler built fresh from the history must decide as the running one did.
  auto ra = Simulate(
      *a, 40, 4, kMaxResource, true, 7,
      [&](const StudyView& study, const TrialView& t, const Decision& d) {
        if (t.number % 5 != 0) return;
        auto fresh = Make(GetParam());
        Decision f = fresh->OnReport(study, t);
        EXPECT_EQ(f.action, d.action) << "trial " << t.number;
        EXPECT_EQ(f.reason, d.reason);
        ++checked;
      },
      GetParam().objectives);
  auto rb = Simulate(*b, 40, 4, kMaxResource, true, 7, {}, GetParam().objectives);
  EXPECT_GT(checked, 10);
  ASSERT_EQ(ra.events.size(), rb.events.size());
  for (size_t i = 0; i < ra.events.size(); ++i) {
    EXPECT_EQ(ra.events[i].decision.action, rb.events[i].decision.action);
    EXPECT_EQ(ra.events[i].decision.reason, rb.events[i].decision.reason);
  }
  EXPECT_EQ(ra.promotions, rb.promotions);
  ASSERT_EQ(ra.exploits.size(), rb.exploits.size());
  for (size_t i = 0; i < ra.exploits.size(); ++i) {
    EXPECT_EQ(ra.exploits[i].reason, rb.exploits[i].reason);
  }
}

TEST_P(SchedulerContract, ReasonsAndMinResource) {
  auto s = Make(GetParam());
  auto r = Simulate(*s, 60, 3, kMaxResource, true, 7, {}, GetParam().objectives);
  for (const auto& e : r.events) {
    if (e.decision.action == Action::kContinue) continue;
    EXPECT_FALSE(e.decision.reason.empty());
    EXPECT_GE(e.resource, GetParam().min_resource) << e.decision.reason;
  }
  // Every trial ends (completed or stopped) or waits paused; nobody is left running.
  for (const auto& t : r.study.trials) {
    EXPECT_TRUE(IsTerminal(t.state) || t.state == TrialState::kPaused) << t.number;
  }
}

TEST_P(SchedulerContract, MinimizingNegatedValuesDecidesTheSame) {
  auto up = Make(GetParam(), true);
  auto down = Make(GetParam(), false);
  const size_t m = GetParam().objectives;
  auto ru = Simulate(*up, 40, 3, kMaxResource, /*maximize=*/true, 7, {}, m);
  auto rd = Simulate(*down, 40, 3, kMaxResource, /*maximize=*/false, 7, {}, m);
  ASSERT_EQ(ru.events.size(), rd.events.size());
  for (size_t i = 0; i < ru.events.size(); ++i) {
    EXPECT_EQ(ru.events[i].decision.action, rd.events[i].decision.action) << i;
  }
}

TEST_P(SchedulerContract, EmptyStudyHasNoPromotion) {
  auto s = Make(GetParam());
  StudyView study;
  study.max_resource = kMaxResource;
  EXPECT_EQ(s->NextPromotion(study), std::nullopt);
}

// Every case the contract runs; SchedulerContractCoverage checks that each type the factory
// registers has one, so a new algorithm cannot skip the contract.
std::vector<SchedulerCase> Cases() {
  return {
      SchedulerCase{"fifo", "fifo", {}, 1},
      SchedulerCase{
          "plateau", "plateau", {{"patience", int64_t{2}}, {"min_resource", int64_t{4}}}, 4},
      SchedulerCase{"asha_stopping", "asha", {}, 1},
      SchedulerCase{"asha_promotion", "asha", {{"variant", std::string("promotion")}}, 1},
      SchedulerCase{"asha_min3", "asha", {{"min_resource", int64_t{3}}}, 3},
      SchedulerCase{"hyperband", "hyperband", {}, 1},
      SchedulerCase{"hyperband_promotion",
                    "hyperband",
                    {{"variant", std::string("promotion")}, {"eta", int64_t{2}}},
                    1},
      SchedulerCase{"median", "median", {{"min_resource", int64_t{2}}}, 2},
      SchedulerCase{"curve", "curve", {{"min_epochs", int64_t{4}}}, 4},
      SchedulerCase{"curve_top3",
                    "curve",
                    {{"min_epochs", int64_t{2}}, {"k", int64_t{3}}, {"threshold", 0.2}},
                    2},
      SchedulerCase{"curve_bar_reached", "curve", {{"bar", std::string("reached")}}, 3},
      SchedulerCase{"asha_predict", "asha", {{"predict", true}}, 1},
      SchedulerCase{"hyperband_promotion_predict",
                    "hyperband",
                    {{"variant", std::string("promotion")}, {"predict.keep", 0.3}},
                    1},
      SchedulerCase{"pbt", "pbt", {{"population", int64_t{8}}, {"interval_epochs", int64_t{3}}}, 1},
      SchedulerCase{"pbt_half",
                    "pbt",
                    {{"population", int64_t{5}}, {"quantile", 0.5}, {"perturb.0", 0.5}},
                    1},
      SchedulerCase{"asha_plus_plateau",
                    "asha",
                    {{"plateau.patience", int64_t{2}}, {"plateau.min_delta", 0.001}},
                    1},
      SchedulerCase{"hyperband_plus_median",
                    "hyperband",
                    {{"variant", std::string("promotion")}, {"median.min_resource", int64_t{3}}},
                    1}};
}

TEST(SchedulerContractCoverage, EveryRegisteredTypeHasACase) {
  testing::ExpectACaseForEveryType(SchedulerTypes(), Cases());
}

INSTANTIATE_TEST_SUITE_P(All, SchedulerContract, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<SchedulerCase>& info) {
                           return info.param.label;
                         });

// The same contract with two objectives and a constraint, for every type that accepts several.
std::vector<SchedulerCase> MultiObjectiveCases() {
  return {
      SchedulerCase{"fifo", "fifo", {}, 1, 2},
      SchedulerCase{
          "plateau", "plateau", {{"patience", int64_t{2}}, {"min_resource", int64_t{4}}}, 4, 2},
      SchedulerCase{"mo_asha_stopping", "asha", {}, 1, 2},
      SchedulerCase{"mo_asha_promotion", "asha", {{"variant", std::string("promotion")}}, 1, 2},
      SchedulerCase{"mo_asha_min3", "asha", {{"min_resource", int64_t{3}}}, 3, 2},
      SchedulerCase{"mo_hyperband", "hyperband", {}, 1, 2},
      SchedulerCase{"mo_hyperband_promotion",
                    "hyperband",
                    {{"variant", std::string("promotion")}, {"eta", int64_t{2}}},
                    1,
                    2},
      SchedulerCase{"mo_median", "median", {{"min_resource", int64_t{2}}}, 2, 2},
      SchedulerCase{"mo_median_running_average",
                    "median",
                    {{"compare", std::string("running_average")}, {"min_trials", int64_t{5}}},
                    1,
                    2},
      SchedulerCase{"mo_asha_plus_plateau",
                    "asha",
                    {{"plateau.patience", int64_t{2}}, {"plateau.min_delta", 0.001}},
                    1,
                    2},
      SchedulerCase{"mo_hyperband_plus_median",
                    "hyperband",
                    {{"variant", std::string("promotion")}, {"median.min_resource", int64_t{3}}},
                    1,
                    2}};
}

TEST(SchedulerContractCoverage, EveryMultiObjectiveTypeHasACase) {
  testing::ExpectACaseForEveryType(MultiObjectiveSchedulerTypes(), MultiObjectiveCases());
}

INSTANTIATE_TEST_SUITE_P(MultiObjective, SchedulerContract,
                         ::testing::ValuesIn(MultiObjectiveCases()),
                         [](const ::testing::TestParamInfo<SchedulerCase>& info) {
                           return info.param.label;
                         });

// Every other registered type is refused with two objectives, naming the ones that work; so is
// the curve model guarding ASHA.
TEST(SchedulerFactory, TypesForOneObjectiveAreRefusedWithSeveral) {
  const int refused = testing::ExpectRefusedWithSeveral(
      SchedulerTypes(), MultiObjectiveSchedulerTypes(), "asha, hyperband, median, plateau or fifo",
      [](const std::string& type, std::vector<std::string>* errors) {
        return MakeScheduler(type, {}, {kMaxResource, true, 2}, errors) != nullptr;
      });
  EXPECT_EQ(refused, 2);  // curve, pbt
  std::vector<std::string> errors;
  EXPECT_EQ(MakeScheduler("asha", {{"predict", true}}, {kMaxResource, true, 2}, &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "predict: the curve model guards one objective only; with several objectives use "
            "asha or hyperband without predict");
}

TEST(SchedulerFactory, OptionErrorsNameTheKey) {
  std::vector<std::string> errors;
  EXPECT_EQ(MakeScheduler("asha", {{"eta", int64_t{1}}, {"variant", std::string("sync")}},
                          {27, true}, &errors),
            nullptr);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("eta: must be in [2,", 0), 0u);
  EXPECT_EQ(errors[1], "variant: 'sync' is not one of: stopping, promotion");
  errors.clear();
  EXPECT_EQ(MakeScheduler("hyperband", {{"plateau.patiense", int64_t{3}}}, {27, true}, &errors),
            nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "plateau.patiense: unknown option; did you mean 'plateau.patience'? (known: "
            "brackets, eta, max_resource, min_resource, plateau.min_delta, plateau.min_resource, "
            "plateau.patience, plateau.smoothing, predict, variant)");
  errors.clear();
  EXPECT_EQ(MakeScheduler("asha", {{"min_resource", int64_t{30}}}, {27, true}, &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "min_resource: must be <= max_resource (27)");
}

}  // namespace scheduler_contract_test
}  // namespace sift::search

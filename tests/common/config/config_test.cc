// The study config: every section parsed, defaults, shorthands, types.
#include "tests/common/config/config_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/price_catalog.h"
#include "common/hparams/hparams.h"

namespace sift::common {
namespace config_test {

using namespace config_test;  // NOLINT: the suites' helpers
using search::ParamType;
using search::ParamValue;
using search::Scale;

TEST(StudyConfig, ParsesEverySectionOfAYamlConfig) {
  common::StudyConfig c;
  const auto errors = Parse(kFullYaml, &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  ExpectFullStudy(c);
}

TEST(StudyConfig, ParsesTheSameStudyFromJson) {
  common::StudyConfig c;
  const auto errors = Parse(kFullJson, &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  ExpectFullStudy(c);
}

TEST(StudyConfig, FillsDefaultsForOmittedSections) {
  common::StudyConfig c;
  const auto errors =
      Parse(WithSpace("  lr: {type: float, low: 0.001, high: 0.1, scale: log}\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  const common::StudyConfig defaults;
  EXPECT_EQ(c.objective.metric, "val_accuracy");
  EXPECT_TRUE(c.objective.maximize);
  EXPECT_TRUE(c.fixed.empty());
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_EQ(c.scheduler.type, "fifo");
  EXPECT_EQ(c.budget.max_trials, defaults.budget.max_trials);
  EXPECT_EQ(c.budget.max_epochs, defaults.budget.max_epochs);
  EXPECT_EQ(c.budget.max_dollars, 0.0);
  EXPECT_EQ(c.parallelism, 0);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.data.dir, defaults.data.dir);
  EXPECT_EQ(c.data.val_size, 10000);
  EXPECT_EQ(c.worker.instance_type, "local-cpu");
  EXPECT_EQ(c.worker.market, "on-demand");
  EXPECT_EQ(c.checkpoint.every_epochs, 1);
  EXPECT_EQ(c.checkpoint.keep, "latest");
}

TEST(StudyConfig, ALossIsMinimisedUnlessSaidOtherwise) {
  common::StudyConfig c;
  auto errors = Parse(WithSpace(kLr, "objective: {metric: val_loss}\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.objective.metric, "val_loss");
  EXPECT_FALSE(c.objective.maximize);
  EXPECT_EQ(OnlyError(WithSpace(kLr, "objective: {metric: val_loss, direction: maximize}\n")),
            "objective.direction: must be minimize for val_loss, got 'maximize' (line 4)");
}

TEST(StudyConfig, AcceptsAShorthandAlgorithmName) {
  common::StudyConfig c;
  const auto errors = Parse(WithSpace(kLr, "searcher: random\nscheduler: fifo\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_EQ(c.scheduler.type, "fifo");
}

TEST(StudyConfig, FlattensNestedOptionsWithDotsAndTypesThem) {
  common::StudyConfig c;
  const auto errors = Parse(WithSpace(kLr,
                                      "scheduler:\n"
                                      "  type: plateau\n"
                                      "  patience: 3\n"
                                      "  extra:\n"
                                      "    flag: true\n"
                                      "    ratio: 0.5\n"
                                      "    label: \"7\"\n"
                                      "    deep: {name: x}\n"),
                            &c);
  EXPECT_EQ(c.scheduler.options, (search::Options{{"patience", int64_t{3}},
                                                  {"extra.flag", true},
                                                  {"extra.ratio", 0.5},
                                                  {"extra.label", std::string("7")},
                                                  {"extra.deep.name", std::string("x")}}));
  // Plateau knows none of them: each is named with its full path and its line.
  const std::string known = " (known: min_delta, min_resource, patience, smoothing)";
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "scheduler.extra.flag: unknown option" + known + " (line 8)",
                        "scheduler.extra.ratio: unknown option" + known + " (line 9)",
                        "scheduler.extra.label: unknown option" + known + " (line 10)",
                        "scheduler.extra.deep.name: unknown option" + known + " (line 11)",
                    }));
}

TEST(StudyConfig, KeepsConditionsParentsFirstWhenDeclaredLater) {
  common::StudyConfig c;
  const auto errors = Parse(WithSpace("  momentum: {type: float, low: 0.5, high: 0.9, "
                                      "condition: {optimizer: sgd}}\n"
                                      "  lr: {type: float, low: 0.001, high: 0.1}\n"
                                      "  nesterov: {type: int, low: 0, high: 1, "
                                      "condition: {optimizer: [sgd]}}\n"
                                      "  optimizer: {type: categorical, choices: [adam, sgd]}\n"),
                            &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  std::vector<std::string> names;
  for (const auto& p : c.space.params()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"optimizer", "momentum", "lr", "nesterov"}));
  EXPECT_EQ(c.space.Find("momentum")->condition->values,
            (std::vector<ParamValue>{std::string("sgd")}));
}

TEST(StudyConfig, TypesScalarsIntThenDoubleThenStringAndKeepsQuotedOnesStrings) {
  common::StudyConfig c;
  // Neither the choices nor the options suit the trainer or fifo; the errors do not matter here,
  // the typed values (filled in regardless) do.
  Parse(WithSpace(
            "  optimizer: {type: categorical,\n"
            "    choices: [64, -3, 1e-4, 0.5, adam, \"64\", '0.5', inf, 99999999999999999999]}\n",
            "scheduler: {type: fifo, a: true, b: \"true\", c: 3, d: 2.5, e: yes}\n"),
        &c);
  ASSERT_NE(c.space.Find("optimizer"), nullptr);
  EXPECT_EQ(
      c.space.Find("optimizer")->choices,
      (std::vector<ParamValue>{int64_t{64}, int64_t{-3}, 1e-4, 0.5, std::string("adam"),
                               std::string("64"), std::string("0.5"), std::string("inf"), 1e20}));
  EXPECT_EQ(c.scheduler.options, (search::Options{{"a", true},
                                                  {"b", std::string("true")},
                                                  {"c", int64_t{3}},
                                                  {"d", 2.5},
                                                  {"e", std::string("yes")}}));
}

TEST(StudyConfig, EnqueuedConfigurationsAreCheckedAgainstTheSpace) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse(WithSpace(kLr, "enqueue:\n  - {lr: 0.01}\n  - {}\n"), &c).empty());
  ASSERT_EQ(c.enqueue.size(), 2u);
  EXPECT_EQ(c.enqueue[0], (search::Params{{"lr", 0.01}}));
  const auto errors =
      Parse(WithSpace(kLr,
                      "budget: {max_trials: 2}\nenqueue:\n  - {lr: 5}\n  - {depth: 2}\n"
                      "  - lr\n"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "enqueue[0].lr: 5 is outside [0.001, 0.1] (line 6)",
                        "enqueue[1].depth: not a parameter of the search space (line 7)",
                        "enqueue[2]: must be a map, got 'lr' (line 8)",
                    }))
      << JoinLines(errors);
}

// Regression: TPE's 10 random start trials with max_trials: 10 made the whole study random.
TEST(StudyConfig, TpesRandomStartFitsASmallBudgetAndSaysSo) {
  common::StudyConfig c;
  ASSERT_TRUE(
      Parse(WithSpace(kLr, "searcher: {type: tpe}\nbudget: {max_trials: 10}\n"), &c).empty());
  EXPECT_EQ(c.searcher.options.at("n_startup"), search::OptionValue(int64_t{3}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(StartsWith(c.notes[0], "searcher.n_startup: 3 random trials before TPE's model"))
      << c.notes[0];
  // Large budgets keep Optuna's default; an explicit start is the user's, and said when it is
  // the whole study.
  ASSERT_TRUE(
      Parse(WithSpace(kLr, "searcher: {type: tpe}\nbudget: {max_trials: 100}\n"), &c).empty());
  EXPECT_EQ(c.searcher.options.count("n_startup"), 0u);
  EXPECT_TRUE(c.notes.empty());
  ASSERT_TRUE(Parse(WithSpace(kLr,
                              "searcher: {type: tpe, n_startup: 10}\n"
                              "budget: {max_trials: 10}\n"),
                    &c)
                  .empty());
  EXPECT_EQ(c.searcher.options.at("n_startup"), search::OptionValue(int64_t{10}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(HasSubstr(c.notes[0],
                        "searcher.n_startup (10) >= budget.max_trials (10): every "
                        "trial is drawn at random"))
      << c.notes[0];
  ASSERT_TRUE(Parse(WithSpace(kLr, "searcher: {type: gp}\nbudget: {max_trials: 4}\n"), &c).empty());
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(HasSubstr(c.notes[0], "searcher.n_startup (default) (5) >= budget.max_trials (4)"))
      << c.notes[0];
}

TEST(StudyConfig, AcceptsAZooSearch) {
  common::StudyConfig c;
  const auto errors =
      Parse(WithSpace(kLr + std::string("  blocks: {type: int, low: 1, high: 3}\n"
                                        "  stages: {type: int, low: 2, high: 3}\n"
                                        "  activation: {type: categorical, choices: "
                                        "[relu, gelu, silu, tanh]}\n"
                                        "  batch_norm: {type: categorical, choices: "
                                        "[true, false]}\n"),
                      "trainer: {model: resnet, channels: 16}\n"),
            &c);
  EXPECT_TRUE(errors.empty()) << JoinLines(errors);
}

TEST(StudyConfig, MicroBatchIsAutoOrSetDirectlyOrThroughAccumulationSteps) {
  auto hparams = [](const std::string& trainer) {
    common::StudyConfig c;
    const auto errors = Parse(WithSpace(kLr, "trainer: " + trainer + "\n"), &c);
    EXPECT_TRUE(errors.empty()) << JoinLines(errors);
    common::HParams hp;
    EXPECT_EQ(common::ParseHParams(c.fixed, &hp), "");
    return hp;
  };
  EXPECT_TRUE(common::MicroBatchIsAuto(hparams("{micro_batch: auto}")));
  EXPECT_EQ(hparams("{batch_size: 256, accumulation_steps: 4}").micro_batch, 64);
  EXPECT_EQ(common::AccumulationSteps(hparams("{batch_size: 256, accumulation_steps: 4}")), 4);
  EXPECT_EQ(hparams("{batch_size: 256, accumulation_steps: 1}").micro_batch, 0);
  EXPECT_EQ(hparams("{batch_size: 256, micro_batch: 64, accumulation_steps: 4}").micro_batch, 64);
}

TEST(StudyConfig, StopOnDivergenceIsOnUnlessTurnedOff) {
  common::HParams hp;
  EXPECT_TRUE(hp.stop_on_divergence);
  for (const auto& [text, on] :
       {std::pair<const char*, bool>{"false", false}, {"true", true}, {"0", false}, {"1", true}}) {
    common::StudyConfig c;
    const auto errors =
        Parse(WithSpace(kLr, std::string("trainer: {stop_on_divergence: ") + text + "}\n"), &c);
    ASSERT_TRUE(errors.empty()) << JoinLines(errors);
    ASSERT_EQ(common::ParseHParams(c.fixed, &hp), "");
    EXPECT_EQ(hp.stop_on_divergence, on) << text;
  }
  EXPECT_TRUE(HasSubstr(OnlyError(WithSpace(kLr, "trainer: {stop_on_divergence: maybe}\n")),
                        "stop_on_divergence: 'maybe' is not true or false"));
}

}  // namespace config_test
}  // namespace sift::common

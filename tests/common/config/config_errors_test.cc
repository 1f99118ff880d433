// The study config's errors: one class of mistake at a time, the exact message with its line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/price_catalog.h"
#include "common/hparams/hparams.h"
#include "tests/common/config/config_test.h"

namespace sift::common {
namespace config_errors_test {

using namespace config_test;  // NOLINT: the suites' helpers
using search::ParamType;
using search::ParamValue;
using search::Scale;

// ---- one class of mistake at a time: the exact error, with its line ----------------------------

TEST(StudyConfigErrors, LogScaleNeedsAPositiveLow) {
  EXPECT_EQ(OnlyError(WithSpace("  lr: {type: float, low: 0, high: 0.1, scale: log}\n")),
            "search_space.lr.low: must be > 0 for a log scale (line 3)");
}

TEST(StudyConfigErrors, InvertedBounds) {
  EXPECT_EQ(OnlyError(WithSpace("  dropout: {type: float, low: 0.5, high: 0.1}\n")),
            "search_space.dropout.high: must be >= low (line 3)");
}

TEST(StudyConfigErrors, UnknownKeysAreNamedWithASuggestion) {
  EXPECT_EQ(OnlyError(WithSpace(kLr, "seeed: 3\n")),
            "seeed: unknown key; did you mean 'seed'? (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "budget: {max_trails: 3}\n")),
            "budget.max_trails: unknown key; did you mean 'max_trials'? (line 4)");
  EXPECT_EQ(OnlyError(WithSpace("  lr: {type: float, low: 0.001, high: 0.1, scael: log}\n")),
            "search_space.lr.scael: unknown key; did you mean 'scale'? (line 3)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "color: blue\n")), "color: unknown key (line 4)");
}

TEST(StudyConfigErrors, WrongYamlTypes) {
  EXPECT_EQ(OnlyError(WithSpace(kLr, "budget:\n  max_epochs: ten\n")),
            "budget.max_epochs: must be an integer, got 'ten' (line 5)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "budget: {max_trials: \"12\"}\n")),
            "budget.max_trials: must be an integer, got \"12\" (a quoted string) (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "budget: {max_dollars: [1]}\n")),
            "budget.max_dollars: must be a number, got a list (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "seed: -1\n")),
            "seed: must be an integer >= 0, got '-1' (line 4)");
  EXPECT_EQ(OnlyError(WithSpace("  lr: {type: float, low: small, high: 0.1}\n")),
            "search_space.lr.low: must be a number, got 'small' (line 3)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "budget: 5\n")), "budget: must be a map, got '5' (line 4)");
}

TEST(StudyConfigErrors, UnknownParameterType) {
  EXPECT_EQ(OnlyError(WithSpace("  lr: {type: flaot, low: 0.001, high: 0.1}\n")),
            "search_space.lr.type: must be one of float, int, categorical, got 'flaot' (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  lr: {low: 0.001, high: 0.1}\n")),
            "search_space.lr.type: missing; one of float, int, categorical (line 3)");
}

TEST(StudyConfigErrors, FieldsThatDoNotFitTheType) {
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam], low: 1}\n")),
            "search_space.optimizer.low: only for float and int parameters (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  lr: {type: float, high: 0.1}\n")),
            "search_space.lr.low: missing; a float parameter needs low and high (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: []}\n")),
            "search_space.optimizer.choices: must list at least one value (line 3)");
}

TEST(StudyConfigErrors, UnknownSearcherNamesTheKnownOnes) {
  const std::string error = OnlyError(WithSpace(kLr, "searcher: {type: bayes}\n"));
  EXPECT_TRUE(StartsWith(error, "searcher.type: unknown searcher 'bayes' (known: "));
  EXPECT_TRUE(HasSubstr(error, "random"));
  EXPECT_TRUE(EndsWith(error, "(line 4)"));
}

TEST(StudyConfigErrors, BadSchedulerOptions) {
  const auto errors = Parse(WithSpace(kLr,
                                      "scheduler:\n"
                                      "  type: plateau\n"
                                      "  patience: 0\n"
                                      "  patiense: 2\n"));
  ASSERT_EQ(errors.size(), 2u) << JoinLines(errors);
  EXPECT_TRUE(StartsWith(errors[0], "scheduler.patience: must be in [1, "));
  EXPECT_TRUE(EndsWith(errors[0], "got 0 (line 6)"));
  EXPECT_EQ(errors[1],
            "scheduler.patiense: unknown option; did you mean 'patience'? (known: min_delta, "
            "min_resource, patience, smoothing) (line 7)");
  EXPECT_TRUE(StartsWith(OnlyError(WithSpace(kLr, "scheduler: {type: sometimes}\n")),
                         "scheduler.type: unknown scheduler 'sometimes' (known: "));
}

// Regression: these said what was wrong but not what to do.
TEST(StudyConfigErrors, ErrorsSayWhatToWriteInstead) {
  EXPECT_EQ(OnlyError(WithSpace(kLr, "trainer: {epochs: 5}\n")),
            "trainer.epochs: not a trainer hyperparameter; set it as budget.max_epochs (line 4)");
  // Ray Tune's name for an ASHA option: Sift's is named, and the scheduler's options listed.
  EXPECT_EQ(OnlyError(WithSpace(kLr, "scheduler: {type: asha, grace_period: 2}\n")),
            "scheduler.grace_period: unknown option; did you mean 'min_resource'? (Sift's name "
            "for it) (known: eta, max_resource, min_resource, predict, variant) (line 4)");
}

TEST(StudyConfigErrors, UnknownTrainerHyperparameter) {
  EXPECT_TRUE(StartsWith(OnlyError(WithSpace(kLr, "trainer: {dropuot: 0.1}\n")),
                         "trainer.dropuot: not a trainer hyperparameter; did you mean 'dropout'? "
                         "(known: "));
  const std::string error =
      OnlyError(WithSpace("  learning_rate: {type: float, low: 0.1, high: 1}\n"));
  EXPECT_TRUE(
      StartsWith(error, "search_space.learning_rate: not a trainer hyperparameter (known: "));
  EXPECT_TRUE(HasSubstr(error, "lr"));
  EXPECT_TRUE(EndsWith(error, ") (line 3)"));
}

TEST(StudyConfigErrors, TrainerValuesOutOfRange) {
  const auto errors = Parse(WithSpace(kLr,
                                      "trainer:\n"
                                      "  depth: 9\n"
                                      "  precision: fp8\n"
                                      "  model: mlp\n"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "trainer.depth: 9 is outside [1, 8] (line 5)",
                        "trainer.precision: 'fp8' is not one of fp32, bf16, fp16, auto (line 6)",
                    }));
  EXPECT_EQ(OnlyError(WithSpace(kLr, "trainer: {batch_size: 100, micro_batch: 48}\n")),
            "trainer.micro_batch: 48 does not divide batch_size 100 (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "trainer: {micro_batch: some}\n")),
            "trainer.micro_batch: must be an integer (or 'auto') (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "trainer: {batch_size: 100, accumulation_steps: 3}\n")),
            "trainer.accumulation_steps: 3 does not divide batch_size 100 (line 4)");
  EXPECT_EQ(OnlyError(WithSpace(
                kLr, "trainer: {batch_size: 64, accumulation_steps: 4, micro_batch: 32}\n")),
            "trainer.accumulation_steps: 4 x micro_batch 32 is not batch_size 64; set one of them "
            "(line 4)");
}

// The model zoo's settings: each name known, each value checked against its range or choices.
TEST(StudyConfigErrors, ZooSettingsOutOfRange) {
  const auto errors = Parse(WithSpace(kLr,
                                      "trainer:\n"
                                      "  model: resnet18\n"
                                      "  activation: swish\n"
                                      "  norm: group\n"
                                      "  pooling: min\n"
                                      "  batch_norm: maybe\n"
                                      "  taper: 3\n"
                                      "  width2: 4\n"
                                      "  blocks: 0\n"
                                      "  stages: 5\n"));
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "trainer.model: 'resnet18' is not one of mlp, cnn, resnet, torchscript (line 5)",
                "trainer.activation: 'swish' is not one of relu, gelu, silu, tanh (line 6)",
                "trainer.norm: 'group' is not one of none, batch, layer (line 7)",
                "trainer.pooling: 'min' is not one of max, avg (line 8)",
                "trainer.batch_norm: 'maybe' is not true or false (line 9)",
                "trainer.taper: 3 is outside [0.25, 2] (line 10)",
                "trainer.width2: 4 is outside [8, 8192] (line 11)",
                "trainer.blocks: 0 is outside [1, 8] (line 12)",
                "trainer.stages: 5 is outside [1, 4] (line 13)",
            }))
      << JoinLines(errors);
  EXPECT_TRUE(StartsWith(OnlyError(WithSpace(kLr, "trainer: {width9: 64}\n")),
                         "trainer.width9: not a trainer hyperparameter; did you mean 'width"));
}

TEST(StudyConfigErrors, ZooSearchSpaceOutsideTheTrainersRanges) {
  const auto errors =
      Parse(WithSpace(kLr + std::string("  activation: {type: categorical, choices: "
                                        "[relu, swish]}\n"
                                        "  width3: {type: int, low: 4, high: 64}\n"
                                        "  blocks: {type: int, low: 1, high: 12}\n")));
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "search_space.activation.choices: 'swish' is not one of relu, gelu, silu, tanh "
                "(line 4)",
                "search_space.width3.low: 4 is outside [8, 8192] (line 5)",
                "search_space.blocks.high: 12 is outside [1, 8] (line 6)",
            }))
      << JoinLines(errors);
}

TEST(StudyConfigErrors, SearchBoundsOutsideTheTrainersRange) {
  EXPECT_EQ(OnlyError(WithSpace("  dropout: {type: float, low: 0.0, high: 0.99}\n")),
            "search_space.dropout.high: 0.99 is outside [0, 0.95] (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  depth: {type: int, low: 0, high: 3}\n")),
            "search_space.depth.low: 0 is outside [1, 8] (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam, rmsprop]}\n")),
            "search_space.optimizer.choices: 'rmsprop' is not one of sgd, adam, adamw (line 3)");
  EXPECT_EQ(OnlyError(WithSpace("  hidden: {type: float, low: 64, high: 512}\n")),
            "search_space.hidden.type: the trainer takes whole numbers for 'hidden'; use type: int "
            "(line 3)");
}

// Found by config_fuzz: a huge int bound was converted to int64 (undefined behaviour) before
// anything said it was out of range.
TEST(StudyConfigErrors, IntBoundsBeyondTwoToThe53AreNamedNotConverted) {
  EXPECT_EQ(OnlyError(WithSpace("  depth: {type: int, low: 1, high: 1e300}\n")),
            "search_space.depth: int bounds must be within +/-2^53 (9007199254740992) (line 3)");
}

TEST(StudyConfigErrors, ANameBothFixedAndSearched) {
  EXPECT_EQ(OnlyError(WithSpace(kLr, "trainer: {lr: 0.01}\n")),
            "search_space.lr: also fixed under trainer; set it in one place (line 3)");
}

TEST(StudyConfigErrors, ConditionOnAnUnknownParent) {
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam, sgd]}\n"
                                "  momentum: {type: float, low: 0.5, high: 0.9,\n"
                                "             condition: {optimiser: [sgd]}}\n")),
            "search_space.momentum.condition.optimiser: 'optimiser' is not a parameter of the "
            "search space (line 5)");
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam, sgd]}\n"
                                "  momentum: {type: float, low: 0.5, high: 0.9,\n"
                                "             condition: {optimizer: [rmsprop]}}\n")),
            "search_space.momentum.condition: 'rmsprop' is not a choice of 'optimizer' (line 5)");
}

TEST(StudyConfigErrors, ConditionCycles) {
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam, sgd],\n"
                                "              condition: {lr_schedule: [cosine]}}\n"
                                "  lr_schedule: {type: categorical, choices: [cosine, step],\n"
                                "                condition: {optimizer: [sgd]}}\n")),
            "search_space.optimizer.condition: conditions form a cycle: optimizer -> lr_schedule "
            "-> optimizer (each depends on the next) (line 4)");
  EXPECT_EQ(OnlyError(WithSpace("  optimizer: {type: categorical, choices: [adam, sgd], "
                                "condition: {optimizer: [sgd]}}\n")),
            "search_space.optimizer.condition: conditions form a cycle: optimizer -> optimizer "
            "(each depends on the next) (line 3)");
}

TEST(StudyConfigErrors, DuplicateKeys) {
  EXPECT_EQ(OnlyError(WithSpace(std::string(kLr) + "  dropout: {type: float, low: 0.0, high: 0.5}\n"
                                                   "  lr: {type: float, low: 0.01, high: 0.1}\n")),
            "search_space.lr: defined twice (line 5)");
  EXPECT_EQ(OnlyError(WithSpace(kLr, "seed: 1\nseed: 2\n")), "seed: defined twice (line 5)");
}

TEST(StudyConfigErrors, SyntaxErrorsNameTheFileLineAndColumn) {
  const std::string error = OnlyError("name: t\nsearch_space:\n  lr: {type: float, low: 1\n");
  EXPECT_TRUE(StartsWith(error, "study.yaml:4:1: "));
  EXPECT_TRUE(HasSubstr(error, "flow"));
  EXPECT_TRUE(StartsWith(OnlyError("name: t\n  bad: indent\n"), "study.yaml:2:6: "));
}

TEST(StudyConfigErrors, MissingRequiredSections) {
  const auto errors = Parse("seed: 1\n");
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "name: missing; give the study a name matching [A-Za-z0-9_.-]{1,64}",
                        "search_space: missing; a map of parameter name -> {type, low, high, ...}",
                    }));
  EXPECT_EQ(OnlyError("name: t\nsearch_space: {}\n"),
            "search_space: must define at least one parameter (line 2)");
  EXPECT_EQ(OnlyError(WithSpace(kLr).replace(0, 7, "name: my study\n")),
            "name: must match [A-Za-z0-9_.-]{1,64}, got 'my study' (line 1)");
}

TEST(StudyConfigErrors, BudgetDataAndWorkerBounds) {
  const auto errors = Parse(WithSpace(kLr,
                                      "budget: {max_trials: 0, max_epochs: 0, max_dollars: -1}\n"
                                      "parallelism: -2\n"
                                      "data: {dir: '', val_size: 0, train_limit: -5}\n"
                                      "worker: {market: preemptible, price_per_hour: -0.1, "
                                      "threads: -1}\n"
                                      "checkpoint: {every_epochs: 0, every_minutes: 5, "
                                      "keep: newest}\n"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "budget.max_trials: must be >= 1, got 0 (line 4)",
                        "budget.max_epochs: must be >= 1, got 0 (line 4)",
                        "budget.max_dollars: must be >= 0, got -1 (line 4)",
                        "parallelism: must be >= 0, got -2 (line 5)",
                        "data.dir: must not be empty (line 6)",
                        "data.train_limit: must be >= 0, got -5 (line 6)",
                        "data.val_size: must be >= 1, got 0 (line 6)",
                        "worker.market: must be one of on-demand, spot, got 'preemptible' (line 7)",
                        "worker.price_per_hour: must be >= 0, got -0.1 (line 7)",
                        "worker.threads: must be >= 0, got -1 (line 7)",
                        "checkpoint.every_epochs: must be >= 1, got 0 (line 8)",
                        "checkpoint.keep: must be one of all, latest, best, got 'newest' (line 8)",
                        "checkpoint.every_minutes: unknown key (line 8)",
                    }))
      << JoinLines(errors);
}

TEST(StudyConfigErrors, ReportsEveryProblemTogetherInLineOrder) {
  const auto errors = Parse(
      "name: t\n"
      "search_space:\n"
      "  lr: {type: float, low: 0, high: 0.1, scale: log}\n"
      "  hidden: {type: int, low: 512, high: 64}\n"
      "trainer: {depth: 0}\n"
      "budget: {max_trials: 0}\n"
      "scheduler: {type: plateau, patience: 0}\n"
      "colour: red\n");
  ASSERT_EQ(errors.size(), 6u) << JoinLines(errors);
  EXPECT_EQ(errors[0], "search_space.lr.low: must be > 0 for a log scale (line 3)");
  EXPECT_EQ(errors[1], "search_space.hidden.high: must be >= low (line 4)");
  EXPECT_EQ(errors[2], "trainer.depth: 0 is outside [1, 8] (line 5)");
  EXPECT_EQ(errors[3], "budget.max_trials: must be >= 1, got 0 (line 6)");
  EXPECT_TRUE(StartsWith(errors[4], "scheduler.patience: must be in [1, "));
  EXPECT_EQ(errors[5], "colour: unknown key (line 8)");
}

TEST(StudyConfigErrors, ReportsAMissingFile) {
  common::StudyConfig c;
  const auto errors = common::LoadStudyConfig("/nonexistent/study.yaml", &c);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "/nonexistent/study.yaml: cannot read (No such file or directory)"}));
}

}  // namespace config_errors_test
}  // namespace sift::common

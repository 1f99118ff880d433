#include "common/config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/price_catalog.h"
#include "common/hparams/hparams.h"

namespace sift::coordinator {
namespace {

using search::ParamType;
using search::ParamValue;
using search::Scale;

// The study from docs/config.md, every section set.
constexpr const char* kFullYaml = R"(name: fashion-mnist-mlp
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr:        {type: float, low: 1.0e-4, high: 1.0e-2, scale: log}
  hidden:    {type: int, low: 64, high: 512, scale: log}
  dropout:   {type: float, low: 0.0, high: 0.5}
  momentum:  {type: float, low: 0.5, high: 0.99, condition: {optimizer: [sgd]}}
  optimizer: {type: categorical, choices: [adam, sgd]}
  batch_size: {type: categorical, choices: [64, 128, 256]}
trainer: {model: mlp, precision: fp32, depth: 2}
searcher: {type: random}
scheduler: {type: plateau, patience: 2, min_delta: 0.002}
budget: {max_trials: 16, max_epochs: 8, max_dollars: 0.5, max_hours: 0.25}
parallelism: 2
seed: 7
data: {dir: /data/fmnist, train_limit: 4096, val_size: 1000, test_limit: 500}
worker: {instance_type: g5.xlarge, market: spot, price_per_hour: 0.4, threads: 3}
checkpoint: {every_epochs: 2, keep: best}
)";

// The same study as JSON.
constexpr const char* kFullJson = R"({
  "name": "fashion-mnist-mlp",
  "objective": {"metric": "val_accuracy", "direction": "maximize"},
  "search_space": {
    "lr": {"type": "float", "low": 1.0e-4, "high": 1.0e-2, "scale": "log"},
    "hidden": {"type": "int", "low": 64, "high": 512, "scale": "log"},
    "dropout": {"type": "float", "low": 0.0, "high": 0.5},
    "momentum": {"type": "float", "low": 0.5, "high": 0.99, "condition": {"optimizer": ["sgd"]}},
    "optimizer": {"type": "categorical", "choices": ["adam", "sgd"]},
    "batch_size": {"type": "categorical", "choices": [64, 128, 256]}
  },
  "trainer": {"model": "mlp", "precision": "fp32", "depth": 2},
  "searcher": {"type": "random"},
  "scheduler": {"type": "plateau", "patience": 2, "min_delta": 0.002},
  "budget": {"max_trials": 16, "max_epochs": 8, "max_dollars": 0.5, "max_hours": 0.25},
  "parallelism": 2,
  "seed": 7,
  "data": {"dir": "/data/fmnist", "train_limit": 4096, "val_size": 1000, "test_limit": 500},
  "worker": {"instance_type": "g5.xlarge", "market": "spot", "price_per_hour": 0.4, "threads": 3},
  "checkpoint": {"every_epochs": 2, "keep": "best"}
})";

std::vector<std::string> Parse(const std::string& text, StudyConfig* out = nullptr) {
  StudyConfig ignored;
  return ParseStudyConfig(text, "study.yaml", out ? out : &ignored);
}

::testing::AssertionResult StartsWith(const std::string& s, const std::string& prefix) {
  if (s.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not start with '" << prefix << "'";
}

::testing::AssertionResult EndsWith(const std::string& s, const std::string& suffix) {
  if (s.size() >= suffix.size() &&
      s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "'" << s << "' does not end with '" << suffix << "'";
}

::testing::AssertionResult HasSubstr(const std::string& s, const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not contain '" << part << "'";
}

std::string JoinLines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// The single error a config produces.
std::string OnlyError(const std::string& text) {
  const auto errors = Parse(text);
  EXPECT_EQ(errors.size(), 1u) << JoinLines(errors);
  return errors.empty() ? "" : errors[0];
}

// A search space the trainer accepts, for tests about other sections.
constexpr const char* kLr = "  lr: {type: float, low: 0.001, high: 0.1}\n";

// A valid study around one search_space body (lines start at line 3).
std::string WithSpace(const std::string& space, const std::string& rest = "") {
  return "name: t\nsearch_space:\n" + space + rest;
}

void ExpectFullStudy(const StudyConfig& c) {
  EXPECT_EQ(c.name, "fashion-mnist-mlp");
  EXPECT_EQ(c.objective.metric, "val_accuracy");
  EXPECT_TRUE(c.objective.maximize);

  // Parents come before their children; otherwise document order is kept.
  std::vector<std::string> names;
  for (const auto& p : c.space.params()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"lr", "hidden", "dropout", "optimizer", "momentum",
                                             "batch_size"}));
  const auto* lr = c.space.Find("lr");
  ASSERT_NE(lr, nullptr);
  EXPECT_EQ(lr->type, ParamType::kFloat);
  EXPECT_EQ(lr->scale, Scale::kLog);
  EXPECT_DOUBLE_EQ(lr->low, 1e-4);
  EXPECT_DOUBLE_EQ(lr->high, 1e-2);
  const auto* hidden = c.space.Find("hidden");
  ASSERT_NE(hidden, nullptr);
  EXPECT_EQ(hidden->type, ParamType::kInt);
  EXPECT_EQ(hidden->low, 64);
  EXPECT_EQ(hidden->high, 512);
  EXPECT_EQ(c.space.Find("dropout")->scale, Scale::kLinear);
  const auto* momentum = c.space.Find("momentum");
  ASSERT_TRUE(momentum->condition.has_value());
  EXPECT_EQ(momentum->condition->parent, "optimizer");
  EXPECT_EQ(momentum->condition->values, (std::vector<ParamValue>{std::string("sgd")}));
  const auto* optimizer = c.space.Find("optimizer");
  EXPECT_EQ(optimizer->type, ParamType::kCategorical);
  EXPECT_EQ(optimizer->choices, (std::vector<ParamValue>{std::string("adam"), std::string("sgd")}));
  EXPECT_EQ(c.space.Find("batch_size")->choices,
            (std::vector<ParamValue>{int64_t{64}, int64_t{128}, int64_t{256}}));

  EXPECT_EQ(c.fixed, (search::Params{{"model", std::string("mlp")},
                                     {"precision", std::string("fp32")},
                                     {"depth", int64_t{2}}}));
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_TRUE(c.searcher.options.empty());
  EXPECT_EQ(c.scheduler.type, "plateau");
  EXPECT_EQ(c.scheduler.options, (search::Options{{"patience", int64_t{2}}, {"min_delta", 0.002}}));
  EXPECT_EQ(c.budget.max_trials, 16);
  EXPECT_EQ(c.budget.max_epochs, 8);
  EXPECT_DOUBLE_EQ(c.budget.max_dollars, 0.5);
  EXPECT_DOUBLE_EQ(c.budget.max_hours, 0.25);
  EXPECT_EQ(c.parallelism, 2);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.data.dir, "/data/fmnist");
  EXPECT_EQ(c.data.train_limit, 4096);
  EXPECT_EQ(c.data.val_size, 1000);
  EXPECT_EQ(c.data.test_limit, 500);
  EXPECT_EQ(c.worker.instance_type, "g5.xlarge");
  EXPECT_EQ(c.worker.market, "spot");
  EXPECT_DOUBLE_EQ(c.worker.price_per_hour, 0.4);
  EXPECT_EQ(c.worker.threads, 3);
  EXPECT_EQ(c.checkpoint.every_epochs, 2);
  EXPECT_EQ(c.checkpoint.keep, "best");
}

TEST(StudyConfig, ParsesEverySectionOfAYamlConfig) {
  StudyConfig c;
  const auto errors = Parse(kFullYaml, &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  ExpectFullStudy(c);
}

TEST(StudyConfig, ParsesTheSameStudyFromJson) {
  StudyConfig c;
  const auto errors = Parse(kFullJson, &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  ExpectFullStudy(c);
}

TEST(StudyConfig, FillsDefaultsForOmittedSections) {
  StudyConfig c;
  const auto errors =
      Parse(WithSpace("  lr: {type: float, low: 0.001, high: 0.1, scale: log}\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  const StudyConfig defaults;
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
  StudyConfig c;
  auto errors = Parse(WithSpace(kLr, "objective: {metric: val_loss}\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.objective.metric, "val_loss");
  EXPECT_FALSE(c.objective.maximize);
  EXPECT_EQ(OnlyError(WithSpace(kLr, "objective: {metric: val_loss, direction: maximize}\n")),
            "objective.direction: must be minimize for val_loss, got 'maximize' (line 4)");
}

TEST(StudyConfig, AcceptsAShorthandAlgorithmName) {
  StudyConfig c;
  const auto errors = Parse(WithSpace(kLr, "searcher: random\nscheduler: fifo\n"), &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_EQ(c.scheduler.type, "fifo");
}

TEST(StudyConfig, FlattensNestedOptionsWithDotsAndTypesThem) {
  StudyConfig c;
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
  StudyConfig c;
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
  StudyConfig c;
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

TEST(StudyConfig, EnqueuedConfigurationsAreCheckedAgainstTheSpace) {
  StudyConfig c;
  ASSERT_TRUE(Parse(WithSpace(kLr, "enqueue:\n  - {lr: 0.01}\n  - {}\n"), &c).empty());
  ASSERT_EQ(c.enqueue.size(), 2u);
  EXPECT_EQ(c.enqueue[0], (search::Params{{"lr", 0.01}}));
  const auto errors =
      Parse(WithSpace(kLr, "budget: {max_trials: 2}\nenqueue:\n  - {lr: 5}\n  - {depth: 2}\n"
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
  StudyConfig c;
  ASSERT_TRUE(Parse(WithSpace(kLr, "searcher: {type: tpe}\nbudget: {max_trials: 10}\n"), &c)
                  .empty());
  EXPECT_EQ(c.searcher.options.at("n_startup"), search::OptionValue(int64_t{3}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(StartsWith(c.notes[0], "searcher.n_startup: 3 random trials before TPE's model"))
      << c.notes[0];
  // Large budgets keep Optuna's default; an explicit start is the user's, and said when it is
  // the whole study.
  ASSERT_TRUE(Parse(WithSpace(kLr, "searcher: {type: tpe}\nbudget: {max_trials: 100}\n"), &c)
                  .empty());
  EXPECT_EQ(c.searcher.options.count("n_startup"), 0u);
  EXPECT_TRUE(c.notes.empty());
  ASSERT_TRUE(Parse(WithSpace(kLr, "searcher: {type: tpe, n_startup: 10}\n"
                                   "budget: {max_trials: 10}\n"),
                    &c)
                  .empty());
  EXPECT_EQ(c.searcher.options.at("n_startup"), search::OptionValue(int64_t{10}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(HasSubstr(c.notes[0], "searcher.n_startup (10) >= budget.max_trials (10): every "
                                    "trial is drawn at random"))
      << c.notes[0];
  ASSERT_TRUE(Parse(WithSpace(kLr, "searcher: {type: gp}\nbudget: {max_trials: 4}\n"), &c)
                  .empty());
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_TRUE(HasSubstr(c.notes[0], "searcher.n_startup (default) (5) >= budget.max_trials (4)"))
      << c.notes[0];
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
  EXPECT_EQ(
      OnlyError(WithSpace(kLr, "trainer: {batch_size: 64, accumulation_steps: 4, micro_batch: 32}\n")),
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
  EXPECT_EQ(errors, (std::vector<std::string>{
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

TEST(StudyConfig, AcceptsAZooSearch) {
  StudyConfig c;
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
    StudyConfig c;
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
  StudyConfig c;
  const auto errors = LoadStudyConfig("/nonexistent/study.yaml", &c);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "/nonexistent/study.yaml: cannot read (No such file or directory)"}));
}

TEST(StudyConfigFiles, AConfigWithoutANameIsNamedAfterItsFile) {
  // The config a user writes first has no name (issue 28's house-price config): the study is
  // named after the file, and the text it stores says so. A flow map cannot take an appended
  // key, so it still says what is missing.
  const auto dir = std::filesystem::temp_directory_path() / ("sift-name-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& file, const std::string& body) {
    std::ofstream((dir / file).string()) << body;
    return (dir / file).string();
  };
  const std::string body = "search_space:\n  lr: {type: float, low: 1.0e-4, high: 0.1}";
  StudyConfig c;
  std::string text;
  EXPECT_TRUE(LoadStudyConfig(write("my houses!.yaml", body), &c, &text).empty());
  EXPECT_EQ(c.name, "my-houses-");
  EXPECT_EQ(text, body + "\nname: my-houses-\n");
  StudyConfig stored;  // what a restarted coordinator parses
  EXPECT_TRUE(ParseStudyConfig(text, "study", &stored).empty());
  EXPECT_EQ(stored.name, "my-houses-");

  const auto errors = LoadStudyConfig(
      write("flow.json", R"({"search_space": {"lr": {"type": "float", "low": 0.1, "high": 1}}})"),
      &c, &text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "name: missing; give the study a name matching [A-Za-z0-9_.-]{1,64}");
  std::filesystem::remove_all(dir);
}

// ---- the shipped examples ----------------------------------------------------------------------

#ifndef SIFT_SOURCE_DIR
#define SIFT_SOURCE_DIR ""
#endif
// ctest sets SIFT_SOURCE_DIR in the environment; a compile definition is the fallback.
std::string SourceDir() {
  const char* env = std::getenv("SIFT_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : SIFT_SOURCE_DIR;
}

TEST(ExampleConfigs, EveryExampleValidates) {
  const std::string root = SourceDir();
  ASSERT_FALSE(root.empty()) << "set SIFT_SOURCE_DIR to the source tree (ctest does)";
  std::vector<std::filesystem::path> configs;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/examples")) {
    const auto ext = entry.path().extension();
    if (ext == ".yaml" || ext == ".yml") configs.push_back(entry.path());
  }
  std::sort(configs.begin(), configs.end());
  EXPECT_GE(configs.size(), 2u);
  for (const auto& path : configs) {
    StudyConfig c;
    std::string text;
    const auto errors = LoadStudyConfig(path.string(), &c, &text);
    EXPECT_TRUE(errors.empty()) << path << ":\n" << JoinLines(errors);
    EXPECT_FALSE(text.empty()) << path;
  }
}

TEST(ExampleConfigs, TheMainExampleIsTheDocumentedSearch) {
  StudyConfig c;
  const auto errors = LoadStudyConfig(SourceDir() + "/examples/fashion_mnist_mlp.yaml", &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.name, "fashion-mnist-mlp");
  EXPECT_EQ(c.space.size(), 8u);
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_EQ(c.scheduler.type, "plateau");
  EXPECT_EQ(c.budget.max_trials, 12);
  EXPECT_EQ(c.budget.max_epochs, 6);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.data.train_limit, 0);
  EXPECT_EQ(c.data.val_size, 10000);
  EXPECT_EQ(c.worker.instance_type, "local-cpu");
}

TEST(ExampleConfigs, ThePriceCatalogLoadsAndPricesThisMachine) {
  ASSERT_FALSE(SourceDir().empty()) << "set SIFT_SOURCE_DIR to the source tree (ctest does)";
  PriceCatalog catalog;
  ASSERT_EQ(catalog.Load(SourceDir() + "/examples/prices.json"), "");
  EXPECT_FALSE(catalog.as_of().empty());
  double on_demand = 0, spot = 0;
  ASSERT_EQ(catalog.Lookup("local-cpu", "on-demand", &on_demand), "");
  ASSERT_EQ(catalog.Lookup("local-cpu", "spot", &spot), "");
  EXPECT_GT(on_demand, 0.0);
  EXPECT_LT(spot, on_demand);
  // Spot is cheaper than on-demand everywhere in the example; a typo swapping them shows here.
  for (const auto& type : catalog.Types()) {
    ASSERT_EQ(catalog.Lookup(type, "on-demand", &on_demand), "");
    ASSERT_EQ(catalog.Lookup(type, "spot", &spot), "");
    EXPECT_LT(spot, on_demand) << type;
  }
}

TEST(StudyConfig, StopOnDivergenceIsOnUnlessTurnedOff) {
  common::HParams hp;
  EXPECT_TRUE(hp.stop_on_divergence);
  for (const auto& [text, on] : {std::pair<const char*, bool>{"false", false}, {"true", true},
                                 {"0", false}, {"1", true}}) {
    StudyConfig c;
    const auto errors =
        Parse(WithSpace(kLr, std::string("trainer: {stop_on_divergence: ") + text + "}\n"), &c);
    ASSERT_TRUE(errors.empty()) << JoinLines(errors);
    ASSERT_EQ(common::ParseHParams(c.fixed, &hp), "");
    EXPECT_EQ(hp.stop_on_divergence, on) << text;
  }
  EXPECT_TRUE(HasSubstr(OnlyError(WithSpace(kLr, "trainer: {stop_on_divergence: maybe}\n")),
                        "stop_on_divergence: 'maybe' is not true or false"));
}

}  // namespace
}  // namespace sift::coordinator

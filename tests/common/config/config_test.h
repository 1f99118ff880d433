// The study config's tests: the full example study, and helpers that parse a text and return
// its errors (config_test.cc, config_errors_test.cc, config_files_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/config/price_catalog.h"
#include "common/hparams/hparams.h"

namespace sift::common::config_test {

using search::ParamType;
using search::ParamValue;
using search::Scale;

// The study from docs/config.md, every section set.
inline constexpr const char* kFullYaml = R"(name: fashion-mnist-mlp
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
inline constexpr const char* kFullJson = R"({
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

inline std::vector<std::string> Parse(const std::string& text, common::StudyConfig* out = nullptr) {
  common::StudyConfig ignored;
  return common::ParseStudyConfig(text, "study.yaml", out ? out : &ignored);
}

inline ::testing::AssertionResult StartsWith(const std::string& s, const std::string& prefix) {
  if (s.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not start with '" << prefix << "'";
}

inline ::testing::AssertionResult EndsWith(const std::string& s, const std::string& suffix) {
  if (s.size() >= suffix.size() &&
      s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "'" << s << "' does not end with '" << suffix << "'";
}

inline ::testing::AssertionResult HasSubstr(const std::string& s, const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not contain '" << part << "'";
}

inline std::string JoinLines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// The single error a config produces.
inline std::string OnlyError(const std::string& text) {
  const auto errors = Parse(text);
  EXPECT_EQ(errors.size(), 1u) << JoinLines(errors);
  return errors.empty() ? "" : errors[0];
}

// A search space the trainer accepts, for tests about other sections.
inline constexpr const char* kLr = "  lr: {type: float, low: 0.001, high: 0.1}\n";

// A valid study around one search_space body (lines start at line 3).
inline std::string WithSpace(const std::string& space, const std::string& rest = "") {
  return "name: t\nsearch_space:\n" + space + rest;
}

inline void ExpectFullStudy(const common::StudyConfig& c) {
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

}  // namespace sift::common::config_test

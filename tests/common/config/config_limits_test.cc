// Config bombs: inputs built to make validation slow or huge get one error naming the limit.
// Sizes are modest so that the unbounded parser these replace fails by its error count rather
// than by running for minutes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/config.h"

namespace sift::common {
namespace config_limits_test {

std::vector<std::string> Parse(const std::string& text, const common::ConfigLimits& limits = {}) {
  common::StudyConfig ignored;
  return common::ParseStudyConfig(text, "bomb.yaml", &ignored, limits);
}

std::string Repeat(const std::string& item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + item;
  return out;
}

std::string Lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(ConfigLimits, ARepeatedChoiceIsOneErrorWithItsCount) {
  const auto errors = Parse("name: t\nsearch_space:\n  optimizer: {type: categorical, choices: [" +
                            Repeat("adam", 300) + ", sgd, sgd]}\n");
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "search_space.optimizer.choices: 'adam' is listed 300 times (line 3)",
                        "search_space.optimizer.choices: 'sgd' is listed 2 times (line 3)"}))
      << errors.size() << " errors, first: " << (errors.empty() ? "" : errors[0]);
}

TEST(ConfigLimits, TooManyChoicesIsOneErrorNamingTheLimit) {
  const auto errors = Parse("name: t\nsearch_space:\n  optimizer: {type: categorical, choices: [" +
                            Repeat("adam", 2000) + "]}\n");
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "search_space.optimizer.choices: 2000 choices, over the limit of 1000 "
                        "(max_choices) (line 3)"}))
      << errors.size() << " errors, first: " << (errors.empty() ? "" : errors[0]);
}

TEST(ConfigLimits, TooManyConditionValues) {
  common::ConfigLimits limits;
  limits.max_choices = 3;
  const auto errors = Parse(
      "name: t\nsearch_space:\n  optimizer: {type: categorical, choices: [adam, sgd]}\n"
      "  momentum: {type: float, low: 0.5, high: 0.9, condition: {optimizer: [sgd, sgd, sgd, "
      "sgd]}}\n",
      limits);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "search_space.momentum.condition.optimizer: 4 values, over the limit of 3 "
                        "(max_choices) (line 4)"}))
      << Lines(errors);
}

TEST(ConfigLimits, TooManyParameters) {
  std::string space;
  for (int i = 0; i < 65; ++i)
    space += "  p" + std::to_string(i) + ": {type: float, low: 0, high: 1}\n";
  EXPECT_EQ(Parse("name: t\nsearch_space:\n" + space),
            (std::vector<std::string>{
                "search_space: 65 parameters, over the limit of 64 (max_parameters) (line 2)"}));
}

TEST(ConfigLimits, DeepNestingNamesTheLineWhereItGoesTooDeep) {
  std::string nested = "1";
  for (int i = 0; i < 20; ++i) nested = "{k: " + nested + "}";
  const auto errors = Parse(
      "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n"
      "searcher:\n  type: random\n  deep: " +
      nested + "\n");
  ASSERT_EQ(errors.size(), 1u) << Lines(errors);
  EXPECT_EQ(errors[0],
            "bomb.yaml:6: 17 levels of nested maps and lists, over the limit of 16 "
            "(max_depth)");
}

// Past a few hundred levels yaml-cpp's own recursion guard stops first; its message was only
// "bad file".
TEST(ConfigLimits, NestingTooDeepForTheParserNamesTheLimitToo) {
  const auto errors = Parse(
      "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n"
      "x: " +
      std::string(5000, '[') + std::string(5000, ']') + "\n");
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "bomb.yaml:4: maps and lists nested too deep for the YAML parser, over "
                        "the limit of 16 levels (max_depth)"}))
      << Lines(errors);
}

// Each anchor names a map of ten aliases of the one before: 10^5 options once flattened.
TEST(ConfigLimits, AnAliasBombStopsAtTheNodeLimit) {
  std::string text =
      "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n"
      "searcher:\n  type: random\n  m0: &m0 {" +
      Repeat("a: 1", 1) + "}\n";
  for (int level = 1; level <= 5; ++level) {
    std::string body;
    for (int k = 0; k < 10; ++k) {
      body += (k ? ", " : "") + std::string("k") + std::to_string(k) + ": *m" +
              std::to_string(level - 1);
    }
    text += "  m" + std::to_string(level) + ": &m" + std::to_string(level) + " {" + body + "}\n";
  }
  const auto errors = Parse(text);
  ASSERT_EQ(errors.size(), 1u) << errors.size() << " errors, first: " << errors[0];
  EXPECT_NE(errors[0].find("more than 20000 YAML nodes"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("(max_nodes)"), std::string::npos) << errors[0];
}

TEST(ConfigLimits, ALongConditionChain) {
  common::ConfigLimits limits;
  limits.max_condition_depth = 2;
  const auto errors = Parse(
      "name: t\nsearch_space:\n"
      "  optimizer: {type: categorical, choices: [adam, sgd]}\n"
      "  lr_schedule: {type: categorical, choices: [step, cosine], condition: {optimizer: sgd}}\n"
      "  step_gamma: {type: float, low: 0.1, high: 0.5, condition: {lr_schedule: step}}\n",
      limits);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "search_space.step_gamma.condition: 3 parameters in a chain of "
                        "conditions, over the limit of 2 (max_condition_depth) (line 5)"}))
      << Lines(errors);
}

TEST(ConfigLimits, TooManyBytesIsRefusedBeforeParsing) {
  const std::string text = "name: t\n# " + std::string(200000, 'x') +
                           "\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n";
  EXPECT_EQ(
      Parse(text),
      (std::vector<std::string>{"bomb.yaml: 200068 bytes, over the limit of 131072 (max_bytes)"}));
  const std::string path =
      (std::filesystem::temp_directory_path() / "sift-config-limits-test.yaml").string();
  std::ofstream(path) << text;
  common::StudyConfig ignored;
  EXPECT_EQ(common::LoadStudyConfig(path, &ignored),
            (std::vector<std::string>{path + ": over the limit of 131072 bytes (max_bytes)"}));
  std::filesystem::remove(path);
  // A file that never ends is read only up to the limit.
  EXPECT_EQ(common::LoadStudyConfig("/dev/zero", &ignored),
            (std::vector<std::string>{"/dev/zero: over the limit of 131072 bytes (max_bytes)"}));
}

TEST(ConfigLimits, ManyErrorsArePrintedUpToTheLimitThenCounted) {
  std::string text = "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n";
  for (int i = 0; i < 150; ++i) text += "unknown" + std::to_string(i) + ": 1\n";
  const auto errors = Parse(text);
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[0], "unknown0: unknown key (line 4)");
  EXPECT_EQ(errors[100], "... and 50 more errors not shown");
}

}  // namespace config_limits_test
}  // namespace sift::common

// The config's `trial:` section (command trials): the program, its folder, its time limits, and
// the parameter and metric names a command study may use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/config.h"

namespace sift::common {
namespace trial_config_test {

constexpr const char* kSpace = "search_space:\n  width: {type: int, low: 8, high: 64}\n";

std::vector<std::string> Parse(const std::string& text, common::StudyConfig* out,
                               const std::string& origin = "study.yaml") {
  return common::ParseStudyConfig("name: t\n" + text, origin, out);
}

TEST(TrialConfig, ACommandStudyTakesAnyParameterAndMetricName) {
  common::StudyConfig c;
  const auto errors = Parse(std::string("trial: {command: [python3, train.py, --data, data/], "
                                        "report_timeout: 30, grace_seconds: 2}\n") +
                                kSpace +
                                "trainer: {my_flag: on, layers: 3}\n"
                                "objective: {metric: val_f1, direction: maximize}\n",
                            &c);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(c.trial.command, (std::vector<std::string>{"python3", "train.py", "--data", "data/"}));
  EXPECT_EQ(c.trial.report_timeout, 30);
  EXPECT_EQ(c.trial.grace_seconds, 2);
  EXPECT_EQ(c.objective.metric, "val_f1");
  EXPECT_TRUE(c.objective.maximize);
  EXPECT_EQ(c.fixed.size(), 2u);
  EXPECT_EQ(c.space.size(), 1u);
}

TEST(TrialConfig, WithoutACommandTheTrainerStillJudgesTheNames) {
  common::StudyConfig c;
  const auto errors = Parse(kSpace, &c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("search_space.width: not a trainer hyperparameter"), std::string::npos)
      << errors[0];
}

TEST(TrialConfig, TheCommandRunsInTheConfigFilesFolder) {
  const auto dir = std::filesystem::temp_directory_path() / "sift-trial-config-test";
  std::filesystem::create_directories(dir / "sub");
  const std::string path = (dir / "sub" / "study.yaml").string();
  std::ofstream(path) << "name: t\ntrial: {command: [./train.sh]}\n" << kSpace;
  common::StudyConfig c;
  auto errors = common::LoadStudyConfig(path, &c);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(c.trial.dir, (dir / "sub").string());
  // trial.dir, relative to that folder.
  std::ofstream(path) << "name: t\ntrial: {command: [./train.sh], dir: ../work}\n" << kSpace;
  errors = common::LoadStudyConfig(path, &c);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(c.trial.dir, (dir / "work").string());
  std::filesystem::remove_all(dir);
}

TEST(TrialConfig, AProgramThatCannotStartIsAnErrorBeforeAnyTrial) {
  common::StudyConfig c;
  c.trial.dir = std::filesystem::temp_directory_path().string();
  c.trial.command = {"sh", "-c", "true"};
  EXPECT_EQ(common::ValidateStudyData(c), std::vector<std::string>{});
  c.trial.command = {"no-such-program-sift-test"};
  EXPECT_EQ(common::ValidateStudyData(c),
            std::vector<std::string>{"trial.command[0]: 'no-such-program-sift-test' is not "
                                     "found on PATH"});
  c.trial.command = {"./missing.sh"};
  EXPECT_EQ(
      common::ValidateStudyData(c),
      std::vector<std::string>{"trial.command[0]: " + c.trial.dir + "/missing.sh does not exist"});
  c.trial.dir = "/nonexistent-sift";
  EXPECT_EQ(common::ValidateStudyData(c),
            std::vector<std::string>{"trial.dir: /nonexistent-sift is not a folder (the command "
                                     "runs there)"});
}

TEST(TrialConfig, BadSettingsAreErrorsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"trial: {}\n", "trial.command: missing; the program and its arguments"},
      {"trial: {command: python3 train.py}\n", "trial.command: must be a non-empty list"},
      {"trial: {command: []}\n", "trial.command: must be a non-empty list"},
      {"trial: {command: ['', x]}\n", "trial.command[0]: the program must not be empty"},
      {"trial: {command: [a, [b]]}\n", "trial.command[1]: must be a single string"},
      {"trial: {command: [a], report_timeout: 0}\n",
       "trial.report_timeout: must be a number of seconds > 0"},
      {"trial: {command: [a], grace_seconds: -1}\n",
       "trial.grace_seconds: must be a number of seconds >= 0"},
      {"trial: {command: [a], comand: [b]}\n", "trial.comand"},
      {"trial: {command: [a]}\nobjective: {metric: val_f1}\n",
       "objective.direction: missing; say maximize or minimize for the program's own metric "
       "'val_f1'"},
      {"trial: {command: [a]}\ndata: {dir: /x}\n", "data: a command trial reads its own data"},
      {"trial: {command: [a]}\ntrainer: {width: 3}\n",
       "search_space.width: also fixed under trainer"},
  };
  for (const auto& [text, expected] : cases) {
    common::StudyConfig c;
    const auto errors = Parse(text + kSpace, &c);
    ASSERT_FALSE(errors.empty()) << text;
    bool found = false;
    for (const auto& e : errors) found = found || e.find(expected) != std::string::npos;
    EXPECT_TRUE(found) << text << " gave: " << errors[0];
  }
}

}  // namespace trial_config_test
}  // namespace sift::common

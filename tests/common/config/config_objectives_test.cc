// objectives: and constraints: in a study config (issue 26): what they read into, each mistake's
// message with its line, in YAML and JSON, and a changed list named when a study resumes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/config_diff.h"
#include "tests/common/config/config_test.h"
#include "tests/common/data_files.h"

namespace sift::common {
namespace config_objectives_test {

using namespace config_test;  // NOLINT: the suites' helpers

// The errors of `text`.
std::vector<std::string> Judged(const std::string& text, common::StudyConfig* out = nullptr) {
  return Parse(text, out);
}

std::vector<std::string> JudgedOne(const std::string& text) {
  const auto errors = Judged(text);
  EXPECT_EQ(errors.size(), 1u) << JoinLines(errors);
  return errors;
}

// Lines 1-3 are the name and the space; `rest` starts at line 4.
std::string Study(const std::string& rest) { return WithSpace(kLr, rest); }

const char* const kFrontier =
    "objectives:\n"
    "  - {metric: val_accuracy, direction: maximize}\n"
    "  - {metric: dollars}\n"
    "  - {metric: inference_ms, direction: minimize}\n"
    "constraints:\n"
    "  - {metric: params, max: 1.0e6}\n"
    "  - {metric: val_accuracy, min: 0.8}\n";

void ExpectFrontier(const common::StudyConfig& c) {
  ASSERT_EQ(c.objectives.size(), 3u);
  EXPECT_EQ(c.objectives[0].metric, "val_accuracy");
  EXPECT_TRUE(c.objectives[0].maximize);
  EXPECT_EQ(c.objectives[1].metric, "dollars");
  EXPECT_FALSE(c.objectives[1].maximize);  // Sift's own measures are better lower
  EXPECT_EQ(c.objectives[2].metric, "inference_ms");
  EXPECT_FALSE(c.objectives[2].maximize);
  EXPECT_EQ(c.objective.metric, c.objectives[0].metric);
  EXPECT_EQ(c.objective.maximize, c.objectives[0].maximize);
  ASSERT_EQ(c.constraints.size(), 2u);
  EXPECT_EQ(c.constraints[0].metric, "params");
  EXPECT_TRUE(c.constraints[0].upper);
  EXPECT_DOUBLE_EQ(c.constraints[0].bound, 1e6);
  EXPECT_EQ(c.constraints[1].metric, "val_accuracy");
  EXPECT_FALSE(c.constraints[1].upper);
  EXPECT_DOUBLE_EQ(c.constraints[1].bound, 0.8);
  EXPECT_FALSE(c.target.has_value());
}

TEST(StudyConfigObjectives, ASingleObjectiveIsTheListOfOne) {
  common::StudyConfig c;
  ASSERT_EQ(Parse(Study("objective: {metric: val_loss}\n"), &c), std::vector<std::string>{});
  ASSERT_EQ(c.objectives.size(), 1u);
  EXPECT_EQ(c.objectives[0].metric, "val_loss");
  EXPECT_FALSE(c.objectives[0].maximize);
  EXPECT_TRUE(c.constraints.empty());
  // Without objective: too, and with the default that data.task: regression implies.
  ASSERT_EQ(Parse(Study(""), &c), std::vector<std::string>{});
  ASSERT_EQ(c.objectives.size(), 1u);
  EXPECT_EQ(c.objectives[0].metric, "val_accuracy");
  ASSERT_EQ(Parse(Study("data: {file: d.csv, label: y, task: regression}\n"), &c),
            std::vector<std::string>{});
  ASSERT_EQ(c.objectives.size(), 1u);
  EXPECT_EQ(c.objectives[0].metric, "val_rmse");
  EXPECT_FALSE(c.objectives[0].maximize);
}

TEST(StudyConfigObjectives, ReadsObjectivesAndConstraintsFromYaml) {
  common::StudyConfig c;
  EXPECT_EQ(Judged(Study(kFrontier), &c), std::vector<std::string>{});
  ExpectFrontier(c);
}

TEST(StudyConfigObjectives, ReadsTheSameFromJson) {
  const std::string json = R"({
  "name": "t",
  "search_space": {"lr": {"type": "float", "low": 0.001, "high": 0.1}},
  "objectives": [
    {"metric": "val_accuracy", "direction": "maximize"},
    {"metric": "dollars"},
    {"metric": "inference_ms", "direction": "minimize"}
  ],
  "constraints": [{"metric": "params", "max": 1.0e6}, {"metric": "val_accuracy", "min": 0.8}]
})";
  common::StudyConfig c;
  EXPECT_EQ(Judged(json, &c), std::vector<std::string>{});
  ExpectFrontier(c);
  // Errors carry JSON's lines too.
  std::string bad = json;
  bad.replace(bad.find("\"dollars\""), 9, "\"dolars\"");
  bad.replace(bad.find("\"max\": 1.0e6"), 12, "\"max\": \"1e6\"");
  const auto errors = Judged(bad);
  ASSERT_EQ(errors.size(), 2u) << JoinLines(errors);
  EXPECT_TRUE(StartsWith(errors[0],
                         "objectives[1].metric: unknown metric 'dolars' (did you "
                         "mean 'dollars'?)"));
  EXPECT_TRUE(EndsWith(errors[0], "(line 6)"));
  EXPECT_EQ(errors[1],
            "constraints[0].max: must be a number, got \"1e6\" (a quoted string) "
            "(line 9)");
}

TEST(StudyConfigObjectives, AValidFrontierStudyHasNoError) {
  EXPECT_EQ(Parse(Study(kFrontier)), std::vector<std::string>{});
  EXPECT_EQ(Parse(Study("constraints: [{metric: dollars, max: 2}]\n")), std::vector<std::string>{});
  EXPECT_EQ(Parse(Study("constraints: []\n")), std::vector<std::string>{});
}

TEST(StudyConfigObjectives, AnUnknownMetricIsNamedWithASuggestion) {
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy}\n"
                            "  - {metric: dolars, direction: minimize}\n")),
            std::vector<std::string>{
                "objectives[1].metric: unknown metric 'dolars' (did you mean 'dollars'?); the "
                "trainer reports val_accuracy, val_loss, train_loss, val_rmse, val_mae, val_r2, "
                "val_balanced_accuracy, val_macro_f1, val_roc_auc, and Sift measures dollars, "
                "train_seconds, params, inference_ms (line 6)"});
  const auto far =
      JudgedOne(Study("objectives:\n  - {metric: val_accuracy}\n"
                      "  - {metric: latency}\n"));
  EXPECT_TRUE(StartsWith(far[0], "objectives[1].metric: unknown metric 'latency'; the trainer"));
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: inference_sm, max: 2}\n")),
            std::vector<std::string>{
                "constraints[0].metric: unknown metric 'inference_sm' (did you mean "
                "'inference_ms'?); the trainer reports val_accuracy, val_loss, train_loss, "
                "val_rmse, val_mae, val_r2, val_balanced_accuracy, val_macro_f1, val_roc_auc, "
                "and Sift measures dollars, train_seconds, params, inference_ms (line 5)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy}\n"
                            "  - {direction: minimize}\n")),
            std::vector<std::string>{
                "objectives[1].metric: missing; name a metric the trial reports or one Sift "
                "measures (dollars, train_seconds, params, inference_ms) (line 6)"});
}

TEST(StudyConfigObjectives, ADirectionIsMaximizeOrMinimizeAndFitsTheMetric) {
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy, direction: maximise}\n"
                            "  - {metric: dollars}\n")),
            std::vector<std::string>{"objectives[0].direction: must be one of maximize, "
                                     "minimize, got 'maximise' (line 5)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy}\n"
                            "  - {metric: dollars, direction: maximize}\n")),
            std::vector<std::string>{
                "objectives[1].direction: must be minimize for dollars, got 'maximize' (line 6)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_loss, direction: maximize}\n"
                            "  - {metric: params}\n")),
            std::vector<std::string>{
                "objectives[0].direction: must be minimize for val_loss, got 'maximize' (line 5)"});
}

TEST(StudyConfigObjectives, TwoToFourDistinctObjectives) {
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy}\n")),
            std::vector<std::string>{"objectives: lists 1; give 2 to 4 (a single one is "
                                     "objective: {metric, direction}) (line 4)"});
  EXPECT_EQ(JudgedOne(Study("objectives: []\n")),
            std::vector<std::string>{"objectives: lists 0; give 2 to 4 (a single one is "
                                     "objective: {metric, direction}) (line 4)"});
  EXPECT_EQ(JudgedOne(Study("objectives: [{metric: val_accuracy}, {metric: dollars}, "
                            "{metric: params}, {metric: train_seconds}, "
                            "{metric: inference_ms}]\n")),
            std::vector<std::string>{"objectives: lists 5; give 2 to 4 (a single one is "
                                     "objective: {metric, direction}) (line 4)"});
  EXPECT_EQ(
      JudgedOne(Study("objectives:\n  - {metric: dollars}\n  - {metric: val_accuracy}\n"
                      "  - {metric: dollars}\n")),
      std::vector<std::string>{"objectives[2].metric: dollars is already objectives[0] (line 7)"});
  EXPECT_EQ(JudgedOne(Study("objectives: {metric: dollars}\n")),
            std::vector<std::string>{"objectives: must be a list of 2 to 4 {metric, "
                                     "direction}, got a map (line 4)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - val_accuracy\n  - {metric: dollars}\n")),
            std::vector<std::string>{"objectives[0]: must be a map, got 'val_accuracy' (line 5)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy, weight: 2}\n"
                            "  - {metric: dollars}\n")),
            std::vector<std::string>{"objectives[0].weight: unknown key (line 5)"});
}

TEST(StudyConfigObjectives, ObjectiveAndObjectivesTogetherAreAnError) {
  EXPECT_EQ(JudgedOne(Study("objective: {metric: val_accuracy}\n"
                            "objectives: [{metric: val_accuracy}, {metric: dollars}]\n")),
            std::vector<std::string>{"objectives: give either objective: (one) or objectives: "
                                     "(2 to 4), not both (line 5)"});
  // A target needs one objective to reach; a Pareto set has none.
  EXPECT_EQ(JudgedOne(Study("objective: {target: 0.9}\n"
                            "objectives: [{metric: val_accuracy}, {metric: dollars}]\n")),
            std::vector<std::string>{"objective.target: a target is for a single objective; "
                                     "with objectives: the result is a Pareto set, not one "
                                     "value to reach (line 4)"});
  EXPECT_EQ(JudgedOne(Study("objectives:\n  - {metric: val_accuracy, target: 0.9}\n"
                            "  - {metric: dollars}\n")),
            std::vector<std::string>{"objectives[0].target: a target is for a single objective "
                                     "(objective.target); several have a Pareto set, not one "
                                     "value to reach (line 5)"});
}

TEST(StudyConfigObjectives, AConstraintHasExactlyOneNumericBound) {
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: params, max: 1e6, min: 10}\n")),
            std::vector<std::string>{"constraints[0]: give max or min, not both (a range is two "
                                     "constraints) (line 5)"});
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: params}\n")),
            std::vector<std::string>{"constraints[0]: missing max or min: a constraint is "
                                     "{metric, max: X} or {metric, min: X} (line 5)"});
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: inference_ms, max: two}\n")),
            std::vector<std::string>{"constraints[0].max: must be a number, got 'two' (line 5)"});
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: dollars, max: -1}\n")),
            std::vector<std::string>{
                "constraints[0].max: must be >= 0 for dollars, which is never negative (line 5)"});
  EXPECT_EQ(JudgedOne(Study("constraints:\n  - {metric: params, max: 1e6}\n"
                            "  - {metric: params, max: 2e6}\n")),
            std::vector<std::string>{
                "constraints[1].max: a second max for params (constraints[0] has one) (line 6)"});
  EXPECT_EQ(JudgedOne(Study("constraints: {metric: params, max: 1e6}\n")),
            std::vector<std::string>{"constraints: must be a list of {metric, max: X} or "
                                     "{metric, min: X}, got a map (line 4)"});
  // A range is a min and a max.
  common::StudyConfig c;
  EXPECT_EQ(Judged(Study("constraints:\n  - {metric: params, min: 1e4}\n"
                         "  - {metric: params, max: 1e6}\n"),
                   &c),
            std::vector<std::string>{});
  ASSERT_EQ(c.constraints.size(), 2u);
  EXPECT_FALSE(c.constraints[0].upper);
  EXPECT_TRUE(c.constraints[1].upper);
}

TEST(StudyConfigObjectives, EveryBadEntryIsNamedAtOnce) {
  const auto errors =
      Judged(Study("objectives:\n"
                   "  - {metric: val_acuracy}\n"
                   "  - {metric: dollars, direction: up}\n"
                   "constraints:\n"
                   "  - {metric: params}\n"
                   "  - {metric: inference_ms, max: 2}\n"
                   "  - {metric: train_seconds, min: fast}\n"));
  ASSERT_EQ(errors.size(), 4u) << JoinLines(errors);
  EXPECT_TRUE(StartsWith(errors[0],
                         "objectives[0].metric: unknown metric 'val_acuracy' (did "
                         "you mean 'val_accuracy'?)"));
  EXPECT_EQ(errors[1],
            "objectives[1].direction: must be one of maximize, minimize, got 'up' "
            "(line 6)");
  EXPECT_TRUE(StartsWith(errors[2], "constraints[0]: missing max or min"));
  EXPECT_TRUE(EndsWith(errors[2], "(line 8)"));
  EXPECT_EQ(errors[3], "constraints[2].min: must be a number, got 'fast' (line 10)");
}

TEST(StudyConfigObjectives, AMetricOfTheOtherTaskIsAnError) {
  EXPECT_EQ(Judged(Study("data: {file: d.csv, label: y, task: regression}\n"
                         "objectives: [{metric: val_rmse}, {metric: val_accuracy}]\n"
                         "constraints: [{metric: val_macro_f1, min: 0.5}]\n")),
            (std::vector<std::string>{
                "objectives[1].metric: val_accuracy is for classification; data.task is "
                "regression (use val_rmse, val_mae or val_r2) (line 5)",
                "constraints[0].metric: val_macro_f1 is for classification; data.task is "
                "regression (use val_rmse, val_mae or val_r2) (line 6)"}));
}

// The task a CSV's labels imply is known only once the file is read (`sift validate`).
TEST(StudyConfigObjectives, EveryMetricMustFitTheTaskTheDataImplies) {
  data::testing::TempDir dir;
  std::string text = "a,y\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(i) + "," + std::to_string(i * 0.5) + "\n";
  data::testing::WriteFile(dir / "d.csv", text);
  const std::string data = "data: {file: " + dir / "d.csv" + ", label: y}\n";
  common::StudyConfig c;
  EXPECT_EQ(Judged(Study(data + "objectives: [{metric: val_rmse}, {metric: dollars}]\n"
                                "constraints: [{metric: params, max: 1e6}]\n"),
                   &c),
            std::vector<std::string>{});
  EXPECT_EQ(common::ValidateStudyData(c), std::vector<std::string>{});
  EXPECT_EQ(Judged(Study(data + "objectives: [{metric: dollars}, {metric: val_accuracy}]\n"
                                "constraints: [{metric: val_roc_auc, min: 0.7}]\n"),
                   &c),
            std::vector<std::string>{});
  EXPECT_EQ(common::ValidateStudyData(c),
            (std::vector<std::string>{
                "objectives[1].metric: val_accuracy, but the label is a regression target (many "
                "distinct numbers); use val_rmse, or data.task: classification",
                "constraints[0].metric: val_roc_auc, but the label is a regression target (many "
                "distinct numbers); use val_rmse, or data.task: classification"}));
}

TEST(StudyConfigObjectives, ACommandTrialNamesItsProgramsOwnMetrics) {
  const std::string command = "trial: {command: [python3, train.py]}\n";
  common::StudyConfig c;
  EXPECT_EQ(Judged(Study(command + "objectives:\n"
                                   "  - {metric: val_f1, direction: maximize}\n"
                                   "  - {metric: dollars}\n"
                                   "constraints: [{metric: latency_ms, max: 5}]\n"),
                   &c),
            std::vector<std::string>{});
  ASSERT_EQ(c.objectives.size(), 2u);
  EXPECT_EQ(c.objectives[0].metric, "val_f1");
  EXPECT_TRUE(c.objectives[0].maximize);
  EXPECT_FALSE(c.objectives[1].maximize);
  ASSERT_EQ(c.constraints.size(), 1u);
  EXPECT_EQ(c.constraints[0].metric, "latency_ms");
  EXPECT_EQ(JudgedOne(Study(command + "objectives:\n  - {metric: val_f1}\n"
                                      "  - {metric: dollars}\n")),
            std::vector<std::string>{"objectives[0].direction: missing; say maximize or "
                                     "minimize for the program's own metric 'val_f1' (line 6)"});
}

TEST(StudyConfigObjectives, AChangedListIsAChangeWhenAStudyResumes) {
  const std::string stored = Study(kFrontier);
  std::string reordered = stored;
  reordered.replace(reordered.find("{metric: dollars}"), 17, "{metric: params}");
  EXPECT_EQ(common::FirstConfigDifference(stored, reordered, "the study", "f.yaml"),
            "objectives[1].metric: dollars in the study, params in f.yaml");
  std::string loosened = stored;
  loosened.replace(loosened.find("max: 1.0e6"), 10, "max: 2.0e6");
  EXPECT_EQ(common::FirstConfigDifference(stored, loosened, "the study", "f.yaml"),
            "constraints[0].max: 1.0e6 in the study, 2.0e6 in f.yaml");
  std::string fewer = stored;
  fewer.erase(fewer.find("  - {metric: val_accuracy, min: 0.8}\n"));
  EXPECT_EQ(common::FirstConfigDifference(stored, fewer, "the study", "f.yaml"),
            "constraints[1]: {metric: val_accuracy, min: 0.8} in the study, absent in f.yaml");
  EXPECT_EQ(common::FirstConfigDifference(stored, "# same\n" + stored, "a", "b"), "");
}

}  // namespace config_objectives_test
}  // namespace sift::common

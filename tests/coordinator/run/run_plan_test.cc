// The resume rule of `sift run --out DIR` and the config comparison it rests on.
#include <gtest/gtest.h>

#include "common/config/config_diff.h"
#include "coordinator/run/plan.h"

namespace sift::coordinator {
namespace run_plan_test {

constexpr const char* kConfig = R"(name: quick  # a comment
search_space:
  lr: {type: float, low: 1.0e-3, high: 0.1, scale: log}
budget: {max_trials: 4, max_epochs: 3}
)";

StudyRecord Record(int64_t id, StudyState state, const std::string& config = kConfig) {
  StudyRecord r;
  r.id = id;
  r.name = "quick";
  r.config_text = config;
  r.state = state;
  if (state == StudyState::kCompleted) r.end_reason = "all 4 trials finished";
  return r;
}

TEST(ConfigDiff, OrderCommentsQuotingAndNumberSpellingAreTheSameConfig) {
  const std::string same = R"(budget:
  max_epochs: 3
  max_trials: "4"
name: quick
search_space:
  lr: {scale: log, type: float, low: 0.001, high: 1e-1}
)";
  EXPECT_EQ(common::FirstConfigDifference(kConfig, same, "a", "b"), "");
}

TEST(ConfigDiff, NamesTheFirstDifferingKeyPathWithBothValues) {
  std::string changed = kConfig;
  changed.replace(changed.find("max_trials: 4"), 13, "max_trials: 6");
  EXPECT_EQ(common::FirstConfigDifference(kConfig, changed, "the study", "quick.yaml"),
            "budget.max_trials: 4 in the study, 6 in quick.yaml");
  EXPECT_EQ(common::FirstConfigDifference(kConfig, std::string(kConfig) + "seed: 3\n", "a", "b"),
            "seed: absent in a, 3 in b");
  std::string nested = kConfig;
  nested.replace(nested.find("scale: log"), 10, "scale: linear");
  EXPECT_EQ(common::FirstConfigDifference(kConfig, nested, "a", "b"),
            "search_space.lr.scale: log in a, linear in b");
  EXPECT_NE(
      common::FirstConfigDifference(kConfig, "name: [unclosed", "a", "b").find("b cannot be read"),
      std::string::npos);
}

TEST(RunPlan, AnEmptyDirectoryStartsAStudyButHasNothingToResume) {
  RunPlan plan = PlanRun({}, kConfig, "q.yaml", "runs/q", false, false);
  EXPECT_EQ(plan.problem, "");
  EXPECT_EQ(plan.resume_id, 0);
  plan = PlanRun({}, "", "", "runs/q", /*resume=*/true, false);
  EXPECT_EQ(plan.problem,
            "runs/q: no study to resume here; start one with: sift run CONFIG --out runs/q");
}

TEST(RunPlan, AnUnfinishedStudyOfTheSameConfigIsResumedNeverDuplicated) {
  for (StudyState state : {StudyState::kRunning, StudyState::kPaused}) {
    const std::vector<StudyRecord> studies = {Record(1, StudyState::kCancelled), Record(2, state)};
    RunPlan plan = PlanRun(studies, kConfig, "q.yaml", "runs/q", false, false);
    EXPECT_EQ(plan.problem, "");
    EXPECT_EQ(plan.resume_id, 2);
    // A bare --resume runs the study's own config.
    plan = PlanRun(studies, "", "", "runs/q", true, false);
    EXPECT_EQ(plan.resume_id, 2);
    EXPECT_EQ(plan.config_text, kConfig);
  }
  // Two unfinished ones (left by an older sift): the newest runs, the other is paused.
  RunPlan plan = PlanRun({Record(1, StudyState::kRunning), Record(2, StudyState::kRunning)},
                         kConfig, "q.yaml", "runs/q", false, false);
  EXPECT_EQ(plan.resume_id, 2);
  EXPECT_EQ(plan.pause, std::vector<int64_t>({1}));
}

TEST(RunPlan, AChangedConfigIsRefusedNamingTheDifferenceAndNewStartsAfresh) {
  std::string changed = kConfig;
  changed.replace(changed.find("max_epochs: 3"), 13, "max_epochs: 5");
  const std::vector<StudyRecord> studies = {Record(1, StudyState::kPaused)};
  RunPlan plan = PlanRun(studies, changed, "q.yaml", "runs/q", false, false);
  EXPECT_EQ(plan.problem,
            "runs/q holds unfinished study 1 'quick' (PAUSED) of another config: "
            "budget.max_epochs: 3 in the study, 5 in q.yaml. Run it with the same config to "
            "resume it, or pass --new to start afresh.");
  plan = PlanRun(studies, changed, "q.yaml", "runs/q", false, /*start_new=*/true);
  EXPECT_EQ(plan.problem, "");
  EXPECT_EQ(plan.resume_id, 0);
  EXPECT_EQ(plan.config_text, changed);
  EXPECT_EQ(plan.cancel, std::vector<int64_t>({1}));  // no two studies share the workers
}

TEST(RunPlan, AnEndedStudyIsNotRunAgainWithoutNew) {
  const std::vector<StudyRecord> studies = {Record(1, StudyState::kCompleted)};
  for (bool resume : {false, true}) {
    RunPlan plan = PlanRun(studies, kConfig, "q.yaml", "runs/q", resume, false);
    EXPECT_EQ(plan.problem,
              "runs/q holds study 1 'quick', which has ended (COMPLETED: all 4 trials finished); "
              "its results are in runs/q/results.csv. Pass --new to start another study in this "
              "directory, or choose another --out.");
  }
  EXPECT_EQ(PlanRun(studies, kConfig, "q.yaml", "runs/q", false, true).problem, "");
}

}  // namespace run_plan_test
}  // namespace sift::coordinator

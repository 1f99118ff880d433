// Which checkpoints a study may delete under each checkpoint.keep, from names and trial states.
#include "coordinator/core/checkpoint_retention.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/checkpoint_names.h"

namespace sift::coordinator {
namespace checkpoint_retention_test {

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(CheckpointNames, ParseReadsOnlyWhatTheWritersWrite) {
  auto p = common::ParseCheckpointName(common::EpochCheckpointName(12, 3));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->trial, 12);
  EXPECT_EQ(p->epoch, 3);
  EXPECT_EQ(p->step, 0);
  p = common::ParseCheckpointName(common::PreemptCheckpointName(4, 2, 17));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->trial, 4);
  EXPECT_EQ(p->epoch, 2);
  EXPECT_EQ(p->step, 17);
  // Mid-epoch 3 comes after epoch 2's end and before epoch 3's.
  EXPECT_LT(*common::ParseCheckpointName("trial-4-e2.ckpt"), *p);
  EXPECT_LT(*p, *common::ParseCheckpointName("trial-4-e3.ckpt"));
  for (const char* bad :
       {"trial-4-e2.ckpt.part", "trial-04-e2.ckpt", "trial--1-e2.ckpt", "trial-4-e+2.ckpt",
        "trial-4-e2-s.ckpt", "trial-4-e2", "x.ckpt", "trial-4-e2.ckptx", "trial- 4-e2.ckpt", ""}) {
    EXPECT_FALSE(common::ParseCheckpointName(bad)) << bad;
  }
}

TEST(CheckpointRetention, LatestDeletesOnlyWhatTheRecordedOneSupersedes) {
  const std::vector<std::string> files = {
      "trial-0-e1.ckpt", "trial-0-e2.ckpt",     "trial-0-e2-s5.ckpt", "trial-0-e3.ckpt",
      "trial-0-e4.ckpt",  // written, its report not yet recorded: a report may still name it
      "trial-1-e1.ckpt", "trial-1-e2.ckpt",
      "trial-2-e1.ckpt",  // no checkpoint recorded yet
      "trial-9-e1.ckpt",  // a trial this study does not know: not ours to judge
      "sift.db",         "trial-0-e3.ckpt.part"};
  std::map<int64_t, TrialCheckpointState> trials;
  trials[0].newest = "trial-0-e3.ckpt";
  trials[1] = {"trial-1-e1.ckpt", /*settled=*/true, false, 0.8};  // e2 never recorded
  trials[2] = {};
  EXPECT_EQ(
      Sorted(CheckpointsToDelete(files, trials, CheckpointKeep::kLatest)),
      Sorted({"trial-0-e1.ckpt", "trial-0-e2.ckpt", "trial-0-e2-s5.ckpt", "trial-1-e2.ckpt"}));
  EXPECT_TRUE(CheckpointsToDelete(files, trials, CheckpointKeep::kAll).empty());
}

TEST(CheckpointRetention, BestKeepsTheBestSettledTrialAndEveryUnsettledResumePoint) {
  const std::vector<std::string> files = {"trial-0-e3.ckpt", "trial-1-e3.ckpt", "trial-2-e1.ckpt",
                                          "trial-3-e2.ckpt", "trial-4-e3.ckpt", "trial-5-e3.ckpt"};
  std::map<int64_t, TrialCheckpointState> trials;
  trials[0] = {"trial-0-e3.ckpt", true, false, 0.80};
  trials[1] = {"trial-1-e3.ckpt", true, false, 0.85};   // best settled
  trials[2] = {"trial-2-e1.ckpt", false, false, 0.99};  // running (or paused): keeps its point
  trials[3] = {"trial-3-e2.ckpt", true, true, 0.95};    // failed: never the best
  trials[4] = {"trial-4-e3.ckpt", true, false, 0.85};   // ties with 1: the lower number wins
  trials[5] = {"trial-5-e3.ckpt", false, false, std::nullopt};
  EXPECT_EQ(Sorted(CheckpointsToDelete(files, trials, CheckpointKeep::kBest)),
            Sorted({"trial-0-e3.ckpt", "trial-3-e2.ckpt", "trial-4-e3.ckpt"}));
  // A minimized objective arrives as a negated score: the same rule.
  trials[0].score = -0.2;
  trials[1].score = -0.3;
  trials[4].score = -0.4;
  EXPECT_EQ(Sorted(CheckpointsToDelete(files, trials, CheckpointKeep::kBest)),
            Sorted({"trial-1-e3.ckpt", "trial-3-e2.ckpt", "trial-4-e3.ckpt"}));
}

TEST(CheckpointRetention, PartialWritesGoOnceTheirTrialSettlesWhateverTheKeep) {
  const std::vector<std::string> files = {"trial-0-e2.ckpt.tmp.4242.0", "trial-0-e1.ckpt.part",
                                          "trial-1-e2.ckpt.tmp.77.3",   "trial-1-e1.ckpt.part",
                                          "trial-1-e1.ckpt.bak",        "trial-1-e1.ckpt.part.x"};
  std::map<int64_t, TrialCheckpointState> trials;
  trials[0] = {"trial-0-e1.ckpt", /*settled=*/true, false, 0.5};
  trials[1] = {"trial-1-e1.ckpt", /*settled=*/false, false, 0.6};  // its writer may be live
  for (auto keep : {CheckpointKeep::kAll, CheckpointKeep::kLatest, CheckpointKeep::kBest}) {
    EXPECT_EQ(Sorted(CheckpointsToDelete(files, trials, keep)),
              Sorted({"trial-0-e1.ckpt.part", "trial-0-e2.ckpt.tmp.4242.0"}));
  }
}

}  // namespace checkpoint_retention_test
}  // namespace sift::coordinator

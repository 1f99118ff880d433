// A study's trial checkpoints on their own, over a real directory: names, fallbacks newest
// first, and the retention that spares a leased trial's files.
#include "coordinator/core/trial_checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/config/config.h"

namespace sift::coordinator {
namespace trial_checkpoints_test {

using search::TrialState;

class TrialCheckpointsTest : public ::testing::Test {
 protected:
  TrialCheckpointsTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("sift-trial-checkpoints-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir_);
  }
  ~TrialCheckpointsTest() override { std::filesystem::remove_all(dir_); }
  // Study 7 (checkpoint.keep: latest) with `trials` trials started.
  std::shared_ptr<ServedStudy> Study(int trials) {
    common::StudyConfig config;
    const auto errors = common::ParseStudyConfig(
        "name: t\n"
        "search_space:\n"
        "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
        "trainer: {model: mlp}\n"
        "budget: {max_trials: 5, max_epochs: 3}\n",
        "t.yaml", &config);
    EXPECT_TRUE(errors.empty()) << errors.front();
    auto study =
        std::make_shared<ServedStudy>(std::make_unique<StudyRunner>(7, std::move(config), 0));
    for (int n = 0; n < trials; ++n) {
      study->runner->ApplyNewTrial(n, {{"lr", 0.01}});
      study->runner->ApplyState(n, TrialState::kRunning);
      study->runner->ApplyReport(n, 1, 0.5);
    }
    return study;
  }
  void Write(const std::string& study_dir, const std::vector<std::string>& names) {
    std::filesystem::create_directories(study_dir);
    for (const auto& n : names) std::ofstream(study_dir + "/" + n) << "x";
  }
  bool Exists(const std::string& study_dir, const std::string& name) {
    return std::filesystem::exists(study_dir + "/" + name);
  }

  std::filesystem::path dir_;
  std::mutex table_mu_;
  LeaseTable leases_;
};

TEST_F(TrialCheckpointsTest, NamesAreCheckedAgainstTheirTrial) {
  EXPECT_TRUE(TrialCheckpoints::CheckName("", 3).ok());
  EXPECT_TRUE(TrialCheckpoints::CheckName("trial-3-e2.ckpt", 3).ok());
  const Status other = TrialCheckpoints::CheckName("trial-4-e2.ckpt", 3);
  EXPECT_EQ(other.code, Status::Code::kInvalidArgument);
  EXPECT_EQ(other.message, "checkpoint 'trial-4-e2.ckpt' is not a checkpoint name of trial 3");
  EXPECT_EQ(TrialCheckpoints::CheckName("../x", 3).code, Status::Code::kInvalidArgument);
}

TEST_F(TrialCheckpointsTest, FallbacksAreTheTrialsOlderFilesNewestFirst) {
  TrialCheckpoints checkpoints(dir_.string(), table_mu_, leases_);
  const std::string study_dir = checkpoints.StudyDir(7);
  EXPECT_EQ(study_dir, dir_.string() + "/study-7");
  Write(study_dir, {"trial-0-e1.ckpt", "trial-0-e2-s5.ckpt", "trial-0-e2.ckpt", "trial-0-e3.ckpt",
                    "trial-1-e1.ckpt", "notes.txt"});
  EXPECT_EQ(checkpoints.Older(7, 0, "trial-0-e3.ckpt"),
            (std::vector<std::string>{"trial-0-e2-s5.ckpt", "trial-0-e2.ckpt", "trial-0-e1.ckpt"}));
  EXPECT_TRUE(checkpoints.Older(7, 0, "").empty());                 // nothing to fall back from
  EXPECT_TRUE(checkpoints.Older(8, 0, "trial-0-e3.ckpt").empty());  // no folder yet
  TrialCheckpoints none("", table_mu_, leases_);
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.Older(7, 0, "trial-0-e3.ckpt").empty());
}

TEST_F(TrialCheckpointsTest, PruningSparesTheFilesALeasedTrialMayStillReport) {
  TrialCheckpoints checkpoints(dir_.string(), table_mu_, leases_);
  auto study = Study(2);
  const std::string study_dir = checkpoints.StudyDir(7);
  // Trial 1 wrote epoch 3's checkpoint (and left a partial one) but has not reported it yet.
  Write(study_dir, {"trial-0-e1.ckpt", "trial-0-e2.ckpt", "trial-1-e2.ckpt", "trial-1-e3.ckpt",
                    "trial-1-e3.ckpt.part"});
  study->resume = {{0, "trial-0-e2.ckpt"}, {1, "trial-1-e2.ckpt"}};
  EXPECT_EQ(TrialCheckpoints::Resume(*study, 0), "trial-0-e2.ckpt");
  EXPECT_EQ(TrialCheckpoints::Resume(*study, 5), "");
  for (int n = 0; n < 2; ++n) study->runner->ApplyState(n, TrialState::kCompleted);
  TrialLease lease;  // trial 1's worker still holds it (its completion not yet committed)
  lease.id = "L1";
  lease.worker_id = "w1";
  lease.study_id = 7;
  lease.number = 1;
  leases_.Grant(lease);
  checkpoints.Prune(*study);
  EXPECT_FALSE(Exists(study_dir, "trial-0-e1.ckpt"));  // superseded
  EXPECT_TRUE(Exists(study_dir, "trial-0-e2.ckpt"));
  EXPECT_TRUE(Exists(study_dir, "trial-1-e2.ckpt"));
  EXPECT_TRUE(Exists(study_dir, "trial-1-e3.ckpt"));
  EXPECT_TRUE(Exists(study_dir, "trial-1-e3.ckpt.part"));
  leases_.End("L1");                               // settled: what it never reported goes
  checkpoints.Prune(*study, {"trial-1-e3.ckpt"});  // judges just the one named
  EXPECT_FALSE(Exists(study_dir, "trial-1-e3.ckpt"));
  EXPECT_TRUE(Exists(study_dir, "trial-1-e3.ckpt.part"));
  checkpoints.Prune(*study);
  EXPECT_FALSE(Exists(study_dir, "trial-1-e3.ckpt.part"));
  EXPECT_TRUE(Exists(study_dir, "trial-1-e2.ckpt"));
  TrialCheckpoints none("", table_mu_, leases_);
  none.Prune(*study);  // keeps nothing here: never touches a directory
  EXPECT_TRUE(Exists(study_dir, "trial-0-e2.ckpt"));
}

}  // namespace trial_checkpoints_test
}  // namespace sift::coordinator

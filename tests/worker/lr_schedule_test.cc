#include "worker/trainer/lr_schedule.h"

#include <gtest/gtest.h>

namespace sift::worker {
namespace lr_schedule_test {

common::HParams Hp(const std::string& schedule, int64_t warmup) {
  common::HParams hp;
  hp.lr = 0.1;
  hp.lr_schedule = schedule;
  hp.warmup_epochs = warmup;
  hp.step_epochs = 2;
  hp.step_gamma = 0.5;
  return hp;
}

double At(const common::HParams& hp, int64_t epoch, int64_t step) {
  return LearningRate(hp, {epoch, step, /*steps_per_epoch=*/10, /*max_epochs=*/5});
}

TEST(LrScheduleTest, Constant) {
  EXPECT_DOUBLE_EQ(At(Hp("constant", 0), 0, 0), 0.1);
  EXPECT_DOUBLE_EQ(At(Hp("constant", 0), 4, 9), 0.1);
}

TEST(LrScheduleTest, LinearWarmupThenConstant) {
  const common::HParams hp = Hp("constant", 1);
  EXPECT_DOUBLE_EQ(At(hp, 0, 0), 0.01);
  EXPECT_DOUBLE_EQ(At(hp, 0, 4), 0.05);
  EXPECT_DOUBLE_EQ(At(hp, 0, 9), 0.1);
  EXPECT_DOUBLE_EQ(At(hp, 1, 0), 0.1);
}

TEST(LrScheduleTest, CosineDecaysToZeroAfterWarmup) {
  const common::HParams hp = Hp("cosine", 1);
  EXPECT_DOUBLE_EQ(At(hp, 1, 0), 0.1);
  EXPECT_NEAR(At(hp, 3, 0), 0.05, 1e-12);  // halfway through the 40 post-warm-up steps
  EXPECT_LT(At(hp, 4, 9), 0.001);
  EXPECT_GT(At(hp, 4, 9), 0.0);
  EXPECT_DOUBLE_EQ(At(hp, 7, 0), 0.0);  // past max_epochs: stays at zero
}

TEST(LrScheduleTest, StepDecaysEveryStepEpochs) {
  const common::HParams hp = Hp("step", 0);
  EXPECT_DOUBLE_EQ(At(hp, 1, 9), 0.1);
  EXPECT_DOUBLE_EQ(At(hp, 2, 0), 0.05);
  EXPECT_DOUBLE_EQ(At(hp, 4, 3), 0.025);
}

}  // namespace lr_schedule_test
}  // namespace sift::worker

#include "coordinator/core/progress_log.h"

#include <gtest/gtest.h>

namespace sift::coordinator {
namespace progress_log_test {

TEST(ProgressLogTest, AStudysFirstReportIsShownThenOneAnIntervalWithTheCountItLeftOut) {
  double now = 100;
  ProgressLog log(/*every_seconds=*/1.0, [&] { return now; });
  int64_t since = -1;
  EXPECT_TRUE(log.TakeInfo(1, &since));
  EXPECT_EQ(since, 0);
  now = 100.5;
  EXPECT_FALSE(log.TakeInfo(1, &since));
  EXPECT_FALSE(log.TakeInfo(1, &since));
  now = 101.0;
  EXPECT_TRUE(log.TakeInfo(1, &since));
  EXPECT_EQ(since, 2);
  now = 102.5;  // a report every few seconds (training speed): each one is shown
  EXPECT_TRUE(log.TakeInfo(1, &since));
  EXPECT_EQ(since, 0);
}

TEST(ProgressLogTest, EachStudyHasItsOwnInterval) {
  double now = 0;
  ProgressLog log(/*every_seconds=*/1.0, [&] { return now; });
  int64_t since = -1;
  EXPECT_TRUE(log.TakeInfo(1, &since));
  EXPECT_TRUE(log.TakeInfo(2, &since));
  EXPECT_FALSE(log.TakeInfo(1, &since));
  EXPECT_FALSE(log.TakeInfo(2, &since));
}

}  // namespace progress_log_test
}  // namespace sift::coordinator

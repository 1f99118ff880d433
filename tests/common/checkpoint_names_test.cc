// The one grammar of checkpoint names: trial-<N>-e<N>[-s<N>].ckpt, as the writers print them.
#include "common/checkpoint_names.h"

#include <gtest/gtest.h>

namespace sift::common {
namespace checkpoint_names_test {

TEST(CheckpointNameGrammarTest, AcceptsExactlyWhatTheWritersWrite) {
  for (auto [trial, epoch, step] : {std::tuple<int64_t, int64_t, int64_t>{0, 1, 0},
                                    {3, 0, 17},
                                    {12, 345, 0},
                                    {999999999999999999, 999999999999999999, 1}}) {
    const std::string name =
        step == 0 ? EpochCheckpointName(trial, epoch) : PreemptCheckpointName(trial, epoch, step);
    const auto p = ParseCheckpointName(name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(p->trial, trial);
    EXPECT_EQ(p->epoch, epoch);
    EXPECT_EQ(p->step, step);
    EXPECT_TRUE(IsCheckpointNameOf(name, trial)) << name;
    EXPECT_FALSE(IsCheckpointNameOf(name, trial + 1)) << name;
  }
}

TEST(CheckpointNameGrammarTest, RefusesEverythingElse) {
  for (const char* bad :
       {"trial-0-e-1.ckpt",  // a negative epoch (accepted once by the coordinator)
        "trial-0-e1-s-2.ckpt",
        "trial--1-e1.ckpt",
        "trial-0-e+1.ckpt",
        "trial-+0-e1.ckpt",
        "trial-00-e1.ckpt",
        "trial-0-e01.ckpt",
        "trial-0-e1-s01.ckpt",
        "trial-0-e1-s.ckpt",
        "trial-0-e.ckpt",
        "trial-0-e1",
        "trial-0-e1.ckpt.part",
        "trial-0-e1.ckptx",
        "trial-0-e1.ckpt/",
        "trial-0-e1/x.ckpt",
        "trial-0-e../../x.ckpt",
        "../trial-0-e1.ckpt",
        "trial- 0-e1.ckpt",
        "trial-0-e 1.ckpt",
        "Trial-0-e1.ckpt",
        "trial-0-e1-x2.ckpt",
        "trial-0-e1-s2-s3.ckpt",
        "trial-0-e1.CKPT",
        "trial-0-e1e2.ckpt",
        "trial-0-e9999999999999999999.ckpt",  // does not fit 64 bits
        "trial-1000000000000000000-e1.ckpt",
        "x.ckpt",
        ""}) {
    EXPECT_FALSE(ParseCheckpointName(bad)) << bad;
    EXPECT_FALSE(IsCheckpointNameOf(bad, 0)) << bad;
  }
  EXPECT_FALSE(IsCheckpointNameOf(std::string("trial-0-e1.ckpt\0x", 17), 0));
}

}  // namespace checkpoint_names_test
}  // namespace sift::common

// Population-based training in the reports: members' segments, the best member's schedule
// followed back through the members it copied, in the text and in results.json.
#include "coordinator/report/report_pbt.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/coordinator/core/trial_fixture.h"

namespace sift::coordinator {
namespace report_pbt_test {

search::Params Lr(double lr) { return {{"lr", lr}}; }

ExploitRecord Copy(int64_t number, int64_t epoch, int64_t from, double before, double after) {
  ExploitRecord e;
  e.study_id = 1;
  e.number = number;
  e.epoch = epoch;
  e.from_trial = from;
  e.params_before = Lr(before);
  e.params_after = Lr(after);
  e.reason = "pbt";
  return e;
}

// Three members, 6 epochs: #2 copies #0 at epoch 2; #0 copies #1 at epoch 4 (a member copied
// before may be a donor's victim later); #2, best, copies nobody after that.
StudyReport Study() {
  StudyReport r;
  r.study.metric = "val_accuracy";
  r.study.maximize = true;
  r.trials = {Trial(0, 0.1, 0.80, 1), Trial(1, 0.1, 0.85, 2), Trial(2, 0.1, 0.90, 3)};
  const double current[] = {0.012, 0.02, 0.0096};
  for (auto& t : r.trials) {
    t.epochs = 6;
    t.record.params = Lr(current[t.record.number]);
  }
  r.exploits = {Copy(2, 2, 0, 0.001, 0.0096), Copy(0, 4, 1, 0.008, 0.012)};
  r.study.best_trial = 2;
  return r;
}

TEST(ReportPbt, MemberSegmentsSplitAtEachCopy) {
  const auto s = MemberSegments(Study(), 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first, 1);
  EXPECT_EQ(s[0].last, 2);
  EXPECT_EQ(s[0].params, Lr(0.001));
  EXPECT_EQ(s[0].copied_from, -1);
  EXPECT_EQ(s[1].first, 3);
  EXPECT_EQ(s[1].last, 6);
  EXPECT_EQ(s[1].copied_from, 0);
  EXPECT_EQ(s[1].params, Lr(0.0096));
  EXPECT_EQ(MemberSegments(Study(), 1).size(), 1u);  // never copied: one segment, its params
}

TEST(ReportPbt, TheScheduleFollowsTheWeightsBackThroughTheDonors) {
  // #2's weights at epoch 2 were #0's, trained with #0's first lr (0.008, before #0's own copy
  // at epoch 4, which came later and does not touch them).
  const auto s = Schedule(Study(), 2, 6);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].trial, 0);
  EXPECT_EQ(s[0].last, 2);
  EXPECT_EQ(s[0].params, Lr(0.008));
  EXPECT_EQ(s[1].trial, 2);
  EXPECT_EQ(s[1].params, Lr(0.0096));
  // #0 at epoch 6: #1's weights to epoch 4, then its own.
  const auto t = Schedule(Study(), 0, 6);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].trial, 1);
  EXPECT_EQ(t[0].params, Lr(0.02));
  EXPECT_EQ(t[1].first, 5);
}

TEST(ReportPbt, TextAndJson) {
  const std::string text = FormatPbt(Study());
  EXPECT_NE(text.find("pbt: 2 exploits"), std::string::npos) << text;
  EXPECT_NE(text.find("#2: epochs 1-2 lr=0.001; copied #0 at epoch 2, epochs 3-6 lr=0.0096"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("epochs 1-2: lr=0.008 (trained as #0)"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(ToJson(Study()));
  ASSERT_TRUE(j.contains("pbt"));
  EXPECT_EQ(j["pbt"]["exploits"].size(), 2u);
  EXPECT_EQ(j["pbt"]["best_schedule"]["trial"], 2);
  EXPECT_EQ(j["pbt"]["best_schedule"]["segments"][0]["trial"], 0);
  EXPECT_EQ(j["pbt"]["lineage"][2]["segments"][1]["copied_from"], 0);
  StudyReport running = Study();
  running.trials[2].epochs = 2;  // copied at epoch 2, nothing reported since
  EXPECT_NE(FormatPbt(running).find("copied #0 at epoch 2, from epoch 3 lr=0.0096"),
            std::string::npos)
      << FormatPbt(running);
  StudyReport plain = Study();
  plain.exploits.clear();
  EXPECT_EQ(FormatPbt(plain), "");
  EXPECT_FALSE(nlohmann::json::parse(ToJson(plain)).contains("pbt"));
}

}  // namespace report_pbt_test
}  // namespace sift::coordinator

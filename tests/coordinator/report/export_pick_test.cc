#include "coordinator/report/export_pick.h"

#include <gtest/gtest.h>

#include "tests/coordinator/core/trial_fixture.h"

namespace sift::coordinator {
namespace export_pick_test {

// Each trial with a model, its objective also in its last report, and a latency metric.
StudyReport Study() {
  StudyReport r;
  r.study.record.id = 1;
  r.study.record.name = "frontier";
  r.study.metric = "val_accuracy";
  r.study.maximize = true;
  r.trials = {Trial(0, 0.10, 0.80, 1),
              Trial(1, 0.05, 0.82, 2),
              Trial(2, 0.20, 0.90, 3),
              Trial(3, 0.30, 0.89, 4),
              Trial(4, 0.01, 0.95, 5, search::TrialState::kFailed),
              Trial(5, 0.03, 0.86, 6, search::TrialState::kStopped)};
  for (auto& t : r.trials) {
    t.checkpoint = "trial-" + std::to_string(t.record.number) + ".ckpt";
    t.epochs = t.record.state == search::TrialState::kStopped ? 3 : 10;
    ReportRecord last;
    last.epoch = t.epochs;
    last.metrics = {{"val_accuracy", t.objective.value_or(0)},
                    {"inference_ms", 1.0 + static_cast<double>(t.record.number)}};
    t.reports.push_back(last);
  }
  return r;
}

int64_t Pick(const StudyReport& r, const std::string& text) {
  PickRule rule;
  EXPECT_EQ(ParsePick(text, &rule), "") << text;
  std::string why;
  const auto n = PickTrial(r, rule, &why);
  EXPECT_TRUE(n.has_value()) << text << ": " << why;
  return n.value_or(-1);
}

TEST(ExportPick, TheRulesUsersWrite) {
  const StudyReport r = Study();
  // The cheapest model within reach of the best: #5 (stopped, $0.03, 0.86) beats #2 on price.
  EXPECT_EQ(Pick(r, "val_accuracy>=0.85, min dollars"), 5);
  EXPECT_EQ(Pick(r, "val_accuracy >= 0.88 , min dollars"), 2);
  // The best under a price, and under a latency bound from the trials' own reports.
  EXPECT_EQ(Pick(r, "dollars<=0.25, max val_accuracy"), 2);
  EXPECT_EQ(Pick(r, "inference_ms<=2.5, max val_accuracy"), 1);
  EXPECT_EQ(Pick(r, "epochs>=10, min dollars,"), 1);  // a trailing comma is fine
  // No goal: the objective's best among those that meet the bounds; the failed #4 never counts.
  EXPECT_EQ(Pick(r, "dollars<=1"), 2);
}

TEST(ExportPick, AModelIsNeeded) {
  StudyReport r = Study();
  r.trials[2].checkpoint.clear();  // retention removed it, or it never saved one
  EXPECT_EQ(Pick(r, "dollars<=1"), 3);
}

TEST(ExportPick, NothingMeetsTheBoundsSaysHowCloseItCame) {
  PickRule rule;
  ASSERT_EQ(ParsePick("val_accuracy>=0.93, dollars<=0.1", &rule), "");
  std::string why;
  EXPECT_EQ(PickTrial(Study(), rule, &why), std::nullopt);
  EXPECT_EQ(why,
            "none of the 5 trials with a model meets all of val_accuracy>=0.9300 (none; "
            "closest 0.9000), dollars<=0.1000 (3 do)");
  ASSERT_EQ(ParsePick("gpu_hours<=1", &rule), "");
  EXPECT_EQ(PickTrial(Study(), rule, &why), std::nullopt);
  EXPECT_EQ(why,
            "none of the 5 trials with a model meets all of gpu_hours<=1.0000 (no trial "
            "reports gpu_hours)");
}

TEST(ExportPick, BadRulesNameTheClause) {
  PickRule rule;
  EXPECT_EQ(ParsePick("val_accuracy=>0.9", &rule),
            "--pick: 'val_accuracy=>0.9': expected METRIC>=VALUE, METRIC<=VALUE, min METRIC or "
            "max METRIC");
  EXPECT_EQ(ParsePick("val_accuracy>=high", &rule),
            "--pick: 'val_accuracy>=high': 'high' is not a number");
  EXPECT_EQ(ParsePick("min dollars, max val_accuracy", &rule),
            "--pick: 'max val_accuracy': a second min/max (give one goal)");
  EXPECT_EQ(ParsePick(">=3", &rule), "--pick: '>=3': no metric before the bound");
  EXPECT_EQ(ParsePick("a>=1,, min b", &rule), "--pick: an empty clause in 'a>=1,, min b'");
  EXPECT_EQ(ParsePick("", &rule), "--pick: an empty clause in ''");
}

TEST(ExportPick, TheParetoSetTable) {
  const std::string text = FormatParetoSet(Study());
  EXPECT_EQ(
      text.rfind("Pareto set of study 1 'frontier': val_accuracy (maximize) against dollars", 0),
      0u)
      << text;
  // Cheapest first: #5 ($0.03, 0.86, stopped) then #2 ($0.20, 0.90); #1 is beaten by #5.
  EXPECT_NE(text.find("     5        0.8600      0.030000       3  STOPPED     yes\n"
                      "     2        0.9000      0.200000      10  COMPLETED   yes\n"),
            std::string::npos)
      << text;
}

}  // namespace export_pick_test
}  // namespace sift::coordinator

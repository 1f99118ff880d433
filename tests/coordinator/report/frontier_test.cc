#include "coordinator/report/frontier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "coordinator/report/export_pick.h"
#include "tests/coordinator/report/frontier_fixture.h"

namespace sift::coordinator {
namespace frontier_test {

TEST(FrontierReport, OnlyAStudyWithSeveralObjectivesOrAConstraintShowsIt) {
  StudyReport r = TwoObjectiveStudy();
  EXPECT_TRUE(ShowsFrontier(r));
  r.objectives = {{"val_accuracy", true}};
  EXPECT_TRUE(ShowsFrontier(r));  // a constraint alone
  r.constraints.clear();
  EXPECT_FALSE(ShowsFrontier(r));
  EXPECT_EQ(FormatFrontierSummary(r), "");
  EXPECT_EQ(ToJson(r).find("\"pareto\""), std::string::npos);
  EXPECT_EQ(ToCsv(r).find("feasible"), std::string::npos);
}

TEST(FrontierReport, FeasibilityAndTheParetoSetOverFeasibleTrials) {
  const Frontier f = FrontierOf(TwoObjectiveStudy());
  ASSERT_EQ(f.trials.size(), 7u);
  EXPECT_EQ(f.pareto, (std::vector<int64_t>{2, 1}));  // best val_accuracy first
  EXPECT_EQ(Label(f.trials[0]), "dominated");
  EXPECT_EQ(Label(f.trials[1]), "Pareto set");
  EXPECT_EQ(Label(f.trials[3]), "infeasible (inference_ms 3 > 2)");
  EXPECT_EQ(Label(f.trials[4]), "infeasible (inference_ms not reported)");
  EXPECT_EQ(Label(f.trials[5]), "not scored");
  EXPECT_EQ(Label(f.trials[6]), "dominated");
  EXPECT_FALSE(f.trials[3].on_pareto);
  // The reference: the worst of each over feasible trials (0.80, $0.20), 10% of the range beyond.
  ASSERT_EQ(f.reference.size(), 2u);
  EXPECT_NEAR(f.reference[0], 0.79, 1e-12);
  EXPECT_NEAR(f.reference[1], 0.215, 1e-12);
}

// The cost/objective frontier lines (report.h) are choices too: a trial that breaks a constraint,
// or never reported its metric, is not one at any price, however cheap and accurate.
TEST(FrontierReport, TheCostFrontierLeavesOutInfeasibleTrials) {
  const StudyReport r = TwoObjectiveStudy();
  EXPECT_EQ(ParetoFrontier(r, FrontierOver::kAll), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ParetoFrontier(r, FrontierOver::kCompleted), (std::vector<int64_t>{1, 2}));
  StudyReport unconstrained = r;
  unconstrained.constraints.clear();
  EXPECT_EQ(ParetoFrontier(unconstrained), (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(Feasible(r, r.trials[0]));
  EXPECT_FALSE(Feasible(r, r.trials[3]));
  EXPECT_FALSE(Feasible(r, r.trials[4]));
}

TEST(FrontierReport, AMinimumConstraintAndThreeObjectives) {
  StudyReport r = TwoObjectiveStudy();
  r.objectives.push_back({"params", false});
  r.constraints = {search::Constraint{"val_accuracy", 0.82, /*upper=*/false}};
  r.trials[0].reports[0].metrics["params"] = 1e3;  // least accurate, but the smallest
  r.trials[1].reports[0].metrics["params"] = 5e4;
  r.trials[2].reports[0].metrics["params"] = 2e5;
  r.trials[3].reports[0].metrics["params"] = 1e6;
  r.trials[4].reports[0].metrics["params"] = 1e6;
  r.trials[6].reports[0].metrics["params"] = 4e4;  // smaller than #1: no longer dominated
  const Frontier f = FrontierOf(r);
  EXPECT_EQ(Label(f.trials[0]), "infeasible (val_accuracy 0.8 < 0.82)");
  // #3 is feasible now and dominates #4 (better, cheaper, as small); #2 is smaller than #3.
  EXPECT_EQ(f.pareto, (std::vector<int64_t>{3, 2, 1, 6}));
  EXPECT_EQ(Label(f.trials[4]), "dominated");
  const std::string set = FormatParetoSet(r);
  EXPECT_NE(set.find("over val_accuracy (maximize), dollars (minimize), params (minimize)"),
            std::string::npos)
      << set;
  EXPECT_NE(set.find("         params"), std::string::npos) << set;
  EXPECT_NE(
      set.find("     3            0.95       $0.100000           1e+06       5  COMPLETED   yes\n"),
      std::string::npos)
      << set;
}

TEST(FrontierReport, OneObjectiveWithAConstraintHasItsBestFeasibleTrialAsTheSet) {
  StudyReport r = TwoObjectiveStudy();
  r.objectives = {{"val_accuracy", true}};
  const Frontier f = FrontierOf(r);
  EXPECT_EQ(f.pareto, (std::vector<int64_t>{2}));  // #3 and #4 are better, but infeasible
  // One objective: the volume is the distance above the reference (0.80 - 10% of 0.10).
  const auto curve = HypervolumeCurve(r, f);
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_NEAR(curve.back().hypervolume, 0.90 - 0.79, 1e-12);
  EXPECT_EQ(curve.back().trial, 2);
}

TEST(FrontierReport, HypervolumeGrowsWithEachTrialThatWidensTheSet) {
  const StudyReport r = TwoObjectiveStudy();
  const auto curve = HypervolumeCurve(r, FrontierOf(r));
  // #0 alone: 0.01 x 0.115; #1 dominates it: 0.06 x 0.165; #2 adds 0.11 x 0.015 less the
  // overlap 0.06 x 0.015. Infeasible, failed and dominated trials add nothing.
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[0].trial, 0);
  EXPECT_NEAR(curve[0].hypervolume, 0.01 * 0.115, 1e-12);
  EXPECT_NEAR(curve[0].dollars, 0.10, 1e-12);
  EXPECT_NEAR(curve[1].hypervolume, 0.06 * 0.165, 1e-12);
  EXPECT_NEAR(curve[2].hypervolume, 0.06 * 0.165 + 0.11 * 0.015 - 0.06 * 0.015, 1e-12);
  EXPECT_NEAR(curve[2].dollars, 0.35, 1e-12);
  EXPECT_EQ(curve[2].at, 1002);
  for (size_t i = 1; i < curve.size(); ++i) {
    EXPECT_GT(curve[i].hypervolume, curve[i - 1].hypervolume);
    EXPECT_GE(curve[i].dollars, curve[i - 1].dollars);
    EXPECT_GE(curve[i].at, curve[i - 1].at);
  }
}

TEST(FrontierReport, DollarsComeFromTheLedgerAndTrainSecondsFromTheReportElseMeasured) {
  TrialSummary t = Reported(0, 0.25, {{"val_accuracy", 0.9}, {"dollars", 0.2}});
  EXPECT_EQ(TrialMetric(t, "dollars"), 0.25);
  EXPECT_EQ(TrialMetric(t, "train_seconds"), 10.0);  // not reported: its measured seconds
  t.reports[0].metrics["train_seconds"] = 7.5;
  EXPECT_EQ(TrialMetric(t, "train_seconds"), 7.5);
  EXPECT_EQ(TrialMetric(t, "inference_ms"), std::nullopt);
  // --pick reads the same values.
  EXPECT_EQ(PickMetric(t, "train_seconds"), 7.5);
}

TEST(FrontierReport, TheSummaryListsTheSetTheInfeasibleAndTheHypervolume) {
  StudyReport r = TwoObjectiveStudy();
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  const std::string text = FormatSummary(r);
  EXPECT_NE(text.find("Pareto set over val_accuracy (max), dollars (min), feasible trials only "
                      "(constraints: inference_ms <= 2): #2 (val_accuracy 0.9, dollars "
                      "$0.200000); #1 (val_accuracy 0.85, dollars $0.050000)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("infeasible: 2 trials: #3 (inference_ms 3 > 2); #4 (inference_ms not reported)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("hypervolume 0.01065 after $0.350000 (reference point val_accuracy 0.79, "
                      "dollars $0.215000"),
            std::string::npos)
      << text;
  const std::string table = FormatTable(r);
  EXPECT_NE(table.find("    3          0.95     $0.100000             3  infeasible (inference_ms "
                       "3 > 2)\n"),
            std::string::npos)
      << table;
}

TEST(FrontierReport, ResultsFilesCarryTheSetAndEachTrialsStanding) {
  const StudyReport r = TwoObjectiveStudy();
  const auto j = nlohmann::json::parse(ToJson(r));
  EXPECT_EQ(j["pareto"], nlohmann::json({2, 1}));
  EXPECT_EQ(j["study"]["objectives"][1]["metric"], "dollars");
  EXPECT_EQ(j["study"]["objectives"][1]["direction"], "minimize");
  EXPECT_EQ(j["study"]["constraints"][0]["max"], 2.0);
  const auto& t3 = j["trials"][3];
  EXPECT_EQ(t3["feasible"], false);
  EXPECT_EQ(t3["on_pareto"], false);
  EXPECT_EQ(t3["infeasible_because"], "inference_ms 3 > 2");
  EXPECT_EQ(t3["values"]["inference_ms"], 3.0);
  EXPECT_EQ(t3["values"]["dollars"], 0.10);
  EXPECT_EQ(j["trials"][1]["on_pareto"], true);
  EXPECT_EQ(j["trials"][1]["feasible"], true);
  EXPECT_EQ(j["hypervolume"]["curve"].size(), 3u);
  EXPECT_EQ(j["hypervolume"]["curve"][2]["wall_seconds"], 2.0);
  EXPECT_DOUBLE_EQ(j["hypervolume"]["reference"]["dollars"].get<double>(), 0.215);
  const std::string csv = ToCsv(r);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",pareto_frontier,inference_ms,feasible,on_pareto,end_reason"),
            std::string::npos)
      << header;
  EXPECT_NE(csv.find("\n1,COMPLETED,5,0.850000,,11.000,0.05000000,17.000,completed;all,1.5,true,"
                     "true,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",3,false,false,"), std::string::npos) << csv;
}

TEST(FrontierReport, PickChoosesOverAnyObjectiveMetric) {
  const StudyReport r = TwoObjectiveStudy();
  PickRule rule;
  ASSERT_EQ(ParsePick("val_accuracy>=0.85, inference_ms<=2, min dollars", &rule), "");
  std::string why;
  EXPECT_EQ(PickTrial(r, rule, &why), 1);
  ASSERT_EQ(ParsePick("dollars<=0.25, min inference_ms", &rule), "");
  EXPECT_EQ(PickTrial(r, rule, &why), 6);  // #0 and #6 tie at 1.0 ms: the more accurate, #6
  // The study's constraint binds every rule: #3 (3 ms) is the best and cheap, but too slow.
  ASSERT_EQ(ParsePick("max val_accuracy", &rule), "");
  EXPECT_EQ(PickTrial(r, rule, &why), 2);
  ASSERT_EQ(ParsePick("val_accuracy>=0.93", &rule), "");
  EXPECT_EQ(PickTrial(r, rule, &why), std::nullopt);
  EXPECT_EQ(why,
            "none of the 4 trials with a model meets all of val_accuracy>=0.9300 (none; closest "
            "0.9000) (2 with a model break the study's constraints)");
}

}  // namespace frontier_test
}  // namespace sift::coordinator

#include "coordinator/report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "tests/coordinator/core/trial_fixture.h"

namespace sift::coordinator {
namespace report_test {

StudyReport Report() {
  StudyReport r;
  r.study.metric = "val_accuracy";
  r.study.maximize = true;
  r.trials = {Trial(0, 0.10, 0.80, 1),
              Trial(1, 0.05, 0.82, 2),
              Trial(2, 0.20, 0.90, 3),
              Trial(3, 0.30, 0.85, 4),
              Trial(4, 0.01, 0.95, 5, search::TrialState::kFailed),
              Trial(5, 0.02, std::nullopt, 6)};
  return r;
}

TEST(Report, ParetoFrontierKeepsOnlyTrialsNoCheaperTrialBeats) {
  // Cheapest first: #1 (0.05, 0.82) dominates #0 (0.10, 0.80); #2 (0.20, 0.90) is better;
  // #3 costs more and is worse. Failed and unscored trials never count.
  EXPECT_EQ(ParetoFrontier(Report()), (std::vector<int64_t>{1, 2}));
}

TEST(Report, TwoLabelledFrontiersOneWithoutEarlyStoppedTrials) {
  StudyReport r = Report();
  // Stopped after one epoch: cheapest, and its value is a one-epoch value.
  r.trials.push_back(Trial(6, 0.01, 0.83, 7, search::TrialState::kStopped));
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  EXPECT_EQ(ParetoFrontier(r, FrontierOver::kAll), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(ParetoFrontier(r, FrontierOver::kCompleted), (std::vector<int64_t>{1, 2}));
  const std::string text = FormatSummary(r);
  EXPECT_NE(text.find("Pareto frontier, completed trials only (trained to their last epoch): "
                      "#1 ($0.050000, 0.8200), #2 ($0.200000, 0.9000)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Pareto frontier, all trials (early-stopped ones at their last reported "
                      "value): #6 ($0.010000, 0.8300), #2"),
            std::string::npos)
      << text;
  const std::string json = ToJson(r);
  EXPECT_NE(json.find("\"completed\": {\n      \"counts\": \"completed trials only"),
            std::string::npos)
      << json;
  const std::string csv = ToCsv(r);
  EXPECT_NE(csv.find("objective_per_dollar,pareto_frontier"), std::string::npos) << csv;
  EXPECT_NE(csv.find("16.400,completed;all,"), std::string::npos) << csv;  // #1 is on both
  EXPECT_NE(csv.find("83.000,all,"), std::string::npos) << csv;  // #6 only counts in "all"
}

TEST(Report, SummaryShowsIdleWorkerCostApartFromTrials) {
  StudyReport r = Report();
  r.study.idle_dollars = 0.0125;
  r.study.idle_seconds = 45;
  EXPECT_NE(FormatSummary(r).find("idle: $0.012500 over 45 worker-seconds"), std::string::npos)
      << FormatSummary(r);
  EXPECT_NE(ToJson(r).find("\"idle_dollars\": 0.0125"), std::string::npos);
}

// Regression: a pause after Ctrl-C showed as "work redone (17.1%)" with no word of why.
TEST(Report, WorkLostToAPauseIsNamedInTheSpotLine) {
  StudyReport r = Report();
  r.study.dollars = 1.0;
  r.study.wasted_dollars = 0.171;
  EXPECT_NE(FormatSummary(r).find("of work redone (17.1%); by market"), std::string::npos)
      << FormatSummary(r);
  r.study.paused_wasted_dollars = 0.12;
  EXPECT_NE(FormatSummary(r).find("of work redone (17.1%; 12.0% lost to study pauses: the "
                                  "work since each trial's last checkpoint is lost (a command "
                                  "trial's partial epoch too, unless its program saves on "
                                  "SIGTERM)); by market"),
            std::string::npos)
      << FormatSummary(r);
}

TEST(Report, WriteReportFilesCreatesAMissingFolderOrNamesIt) {
  const auto base =
      std::filesystem::temp_directory_path() / ("sift-report-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  const std::string dir = (base / "not" / "yet").string();
  EXPECT_EQ(WriteReportFiles(Report(), dir), "");
  EXPECT_TRUE(std::filesystem::exists(dir + "/results.json"));
  std::ofstream(base / "file") << "x";  // a file where a folder should be
  const std::string problem = WriteReportFiles(Report(), (base / "file" / "sub").string());
  EXPECT_NE(problem.find((base / "file" / "sub").string() + ": cannot create the folder"),
            std::string::npos)
      << problem;
  EXPECT_EQ(problem.find("disk full"), std::string::npos);
  std::filesystem::remove_all(base);
}

TEST(Report, BestSoFarCurveCountsEveryDollarSpentUntilThen) {
  auto curve = BestSoFarCurve(Report());
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[0].trial, 0);
  EXPECT_NEAR(curve[0].dollars, 0.10, 1e-12);
  EXPECT_EQ(curve[1].trial, 1);
  EXPECT_NEAR(curve[1].dollars, 0.15, 1e-12);
  EXPECT_EQ(curve[2].trial, 2);
  EXPECT_NEAR(curve[2].dollars, 0.35, 1e-12);
}

TEST(Report, SummaryGivesDollarsToTarget) {
  StudyReport r = Report();
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  r.target = 0.81;
  EXPECT_NE(FormatSummary(r).find("reached val_accuracy 0.8100 after $0.15000 (trial 1)"),
            std::string::npos)
      << FormatSummary(r);
  r.target = 0.99;
  EXPECT_NE(FormatSummary(r).find("never reached"), std::string::npos);
}

TEST(Report, SummaryAndJsonNameTheBestTrialsModel) {
  StudyReport r = Report();
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  EXPECT_EQ(FormatSummary(r).find("best trial's model"), std::string::npos);  // none kept
  r.trials[2].checkpoint = "trial-2-e4.ckpt";
  EXPECT_NE(FormatSummary(r).find("best trial's model: trial-2-e4.ckpt\n"), std::string::npos);
  r.checkpoint_dir = "/runs/x/checkpoints/study-1";
  EXPECT_NE(
      FormatSummary(r).find("best trial's model: /runs/x/checkpoints/study-1/trial-2-e4.ckpt"),
      std::string::npos);
  EXPECT_NE(ToJson(r).find("\"checkpoint\": \"trial-2-e4.ckpt\""), std::string::npos);
  EXPECT_NE(ToJson(r).find("\"checkpoint_dir\": \"/runs/x/checkpoints/study-1\""),
            std::string::npos);
}

TEST(Report, CsvQuotesReasonsWithCommas) {
  StudyReport r = Report();
  r.trials.resize(1);
  r.trials[0].record.params = {{"opt", std::string("adam")}};
  r.trials[0].record.end_reason = "plateau: no improvement, really";
  const std::string csv = ToCsv(r);
  EXPECT_NE(csv.find("\"plateau: no improvement, really\""), std::string::npos) << csv;
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "trial,state,epochs,val_accuracy,test_accuracy,wall_seconds,dollars,"
            "objective_per_dollar,pareto_frontier,opt,end_reason");
}

// A diverged trial's NaN and infinities reach every output exactly: results.json stays valid JSON
// (nlohmann wrote them as null, which no reader takes back as a number), the CSV and the table
// spell them out, and the trial is never best nor on the frontier, whatever its last value.
TEST(Report, DivergedTrialsAndNonFiniteValuesInEveryOutput) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  StudyReport r = Report();
  r.trials.push_back(Trial(6, 0.001, 0.99, 7, search::TrialState::kDiverged));
  r.trials.push_back(Trial(7, 0.002, nan, 8, search::TrialState::kDiverged));
  r.trials[7].record.end_reason = "val_accuracy NaN at epoch 2";
  r.trials[7].record.final_metrics = {{"test_accuracy", -inf}};
  ReportRecord epoch;
  epoch.epoch = 1;
  epoch.metrics = {{"train_loss", inf}, {"val_loss", nan}, {"val_accuracy", 0.1}};
  r.trials[7].reports = {epoch};
  EXPECT_EQ(ParetoFrontier(r), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(BestSoFarCurve(r).back().trial, 2);

  const auto j = nlohmann::json::parse(ToJson(r));
  const auto& t = j["trials"][7];
  EXPECT_EQ(t["state"], "DIVERGED");
  EXPECT_EQ(t["objective"], "NaN");
  EXPECT_FALSE(t.contains("objective_per_dollar"));
  EXPECT_EQ(t["final_metrics"]["test_accuracy"], "-Infinity");
  EXPECT_EQ(t["curve"][0]["metrics"]["train_loss"], "Infinity");
  EXPECT_EQ(t["curve"][0]["metrics"]["val_loss"], "NaN");
  EXPECT_EQ(t["curve"][0]["metrics"]["val_accuracy"], 0.1);

  const std::string csv = ToCsv(r);
  // No test column value: only an evaluated trial has a test score (final_metrics are not one).
  EXPECT_NE(csv.find("\n7,DIVERGED,0,NaN,,"), std::string::npos) << csv;
  const std::string table = FormatTable(r) + FormatSummary(r);
  EXPECT_NE(table.find("DIVERGED"), std::string::npos) << table;
  EXPECT_NE(table.find("diverged: #6 (), #7 (val_accuracy NaN at epoch 2)"), std::string::npos)
      << table;
}

// The test score appears only for the evaluated trial, labelled as the held-out score of the
// trial chosen by the objective, with its per-class counts; other trials have none anywhere.
TEST(Report, TestScoreOnlyForTheEvaluatedTrial) {
  StudyReport r = Report();
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  r.trials[0].record.final_metrics = {{"test_accuracy", 0.5}};  // an old trial's: not shown
  EvaluationRecord e;
  e.number = 2;
  e.state = EvaluationState::kDone;
  e.requested_by = "best trial";
  e.metrics = {{"test_accuracy", 0.875},  {"test_seconds", 1.5},       {"test_class_0_correct", 3},
               {"test_class_0_total", 4}, {"test_class_1_correct", 4}, {"test_class_1_total", 4}};
  r.trials[2].evaluation = e;
  const std::string summary = FormatSummary(r);
  EXPECT_NE(summary.find("held-out test score of trial 2 (the best trial, chosen by val_accuracy; "
                         "scored once): test_accuracy 0.8750\n  per class (correct/total): 0 3/4, "
                         "1 4/4\n"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("trial 0 ("), std::string::npos);
  const std::string csv = ToCsv(r);
  EXPECT_NE(csv.find("\n2,COMPLETED,0,0.900000,0.875000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n0,COMPLETED,0,0.800000,,"), std::string::npos) << csv;
  const auto j = nlohmann::json::parse(ToJson(r));
  EXPECT_FALSE(j["trials"][0].contains("test"));
  const auto& test = j["trials"][2]["test"];
  EXPECT_EQ(test["state"], "done");
  EXPECT_EQ(test["scores"]["test_accuracy"], 0.875);
  EXPECT_FALSE(test["scores"].contains("test_seconds"));
  EXPECT_EQ(test["per_class"][0]["correct"], 3);
  EXPECT_EQ(test["per_class"][1]["total"], 4);
  EXPECT_EQ(test["per_class"][0]["class"], 0);
  // Classes the data names are keyed and shown by name (underscores and all), numbers in
  // number order.
  e.metrics = {{"test_accuracy", 0.5},
               {"test_class_benign_tumor_correct", 3},
               {"test_class_benign_tumor_total", 4},
               {"test_class_malignant_correct", 1},
               {"test_class_malignant_total", 4}};
  r.trials[2].evaluation = e;
  EXPECT_NE(FormatSummary(r).find("per class (correct/total): benign_tumor 3/4, malignant 1/4\n"),
            std::string::npos)
      << FormatSummary(r);
  EXPECT_EQ(nlohmann::json::parse(ToJson(r))["trials"][2]["test"]["per_class"][0]["class"],
            "benign_tumor");
  e.metrics = {{"test_class_10_correct", 1},
               {"test_class_10_total", 2},
               {"test_class_2_correct", 2},
               {"test_class_2_total", 2}};
  r.trials[2].evaluation = e;
  EXPECT_NE(FormatSummary(r).find("per class (correct/total): 2 2/2, 10 1/2\n"), std::string::npos)
      << FormatSummary(r);
  // Regression columns follow the evaluation's scores; one still being scored shows its state.
  e.metrics = {{"test_rmse", 2.0}, {"test_mae", 1.5}, {"test_r2", 0.25}};
  r.trials[2].evaluation = e;
  EXPECT_EQ(
      ToCsv(r).substr(0, ToCsv(r).find('\n')).find(",test_mae,test_r2,test_rmse,wall_seconds"),
      std::string("trial,state,epochs,val_accuracy").size());
  r.trials[2].evaluation->state = EvaluationState::kPending;
  EXPECT_NE(FormatSummary(r).find("scored once): pending\n"), std::string::npos);
}

}  // namespace report_test
}  // namespace sift::coordinator

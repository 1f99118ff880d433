#include "coordinator/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace sift::coordinator {
namespace {

TrialSummary Trial(int64_t n, double dollars, std::optional<double> value, double ended_at,
                   search::TrialState state = search::TrialState::kCompleted) {
  TrialSummary t;
  t.record.number = n;
  t.record.state = state;
  t.record.ended_at = ended_at;
  t.dollars = dollars;
  t.objective = value;
  return t;
}

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
  EXPECT_NE(FormatSummary(r).find("best trial's model: /runs/x/checkpoints/study-1/trial-2-e4.ckpt"),
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
            "objective_per_dollar,opt,end_reason");
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
  EXPECT_NE(csv.find("\n7,DIVERGED,0,NaN,-Infinity,"), std::string::npos) << csv;
  const std::string table = FormatTable(r) + FormatSummary(r);
  EXPECT_NE(table.find("DIVERGED"), std::string::npos) << table;
  EXPECT_NE(table.find("diverged: #6 (), #7 (val_accuracy NaN at epoch 2)"), std::string::npos)
      << table;
}

}  // namespace
}  // namespace sift::coordinator

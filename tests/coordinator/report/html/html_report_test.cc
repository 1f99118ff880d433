// The HTML report's chart data on hand-made inputs, and the page's structure.
#include "coordinator/report/html/html_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/charts.h"
#include "tests/coordinator/core/trial_fixture.h"

namespace sift::coordinator {
namespace html_report_test {

using search::TrialState;

ReportRecord Report(int64_t n, int64_t epoch, double value, const std::string& lease,
                    const std::string& decision = "CONTINUE", const std::string& reason = "") {
  ReportRecord r;
  r.study_id = 1;
  r.number = n;
  r.epoch = epoch;
  r.metrics = {{"val_accuracy", value}};
  r.lease_id = lease;
  r.decision = decision;
  r.reason = reason;
  return r;
}

StudyReport Study() {
  StudyReport r;
  r.study.record.id = 1;
  r.study.record.name = "hand-made";
  r.study.metric = "val_accuracy";
  r.study.maximize = true;
  return r;
}

TEST(HtmlChartData, ImportanceFindsTheParameterThatDrivesTheObjective) {
  StudyReport r = Study();
  for (int i = 0; i < 40; ++i) {
    // `lr` sets the objective; `seed` alternates and means nothing; `opt` splits it in two.
    auto t = Trial(i, 0.01, 0.5 + 0.01 * i + (i % 2 ? 0.1 : 0.0), i);
    t.record.params = {{"lr", 0.001 * (i + 1)},
                       {"seed", static_cast<int64_t>(i % 3)},
                       {"opt", std::string(i % 2 ? "adam" : "sgd")}};
    r.trials.push_back(t);
  }
  const auto importance = ParamImportance(r);
  ASSERT_EQ(importance.size(), 3u);
  EXPECT_EQ(importance[0].param, "lr");
  EXPECT_GT(importance[0].share, 0.5);
  EXPECT_EQ(importance[0].bins, 8);  // 40 trials: bins of 5
  EXPECT_EQ(importance[1].param, "opt");
  EXPECT_GT(importance[1].share, 0.1);
  EXPECT_EQ(importance[2].param, "seed");
  EXPECT_LT(importance[2].share, 0.05);  // noise, less what noise explains: about nothing
  EXPECT_EQ(importance[2].bins, 3);
}

TEST(HtmlChartData, ImportanceComparesTrialsAtOneEpochNotAtWhereTheyStopped) {
  // `width` decides only when a trial was stopped (wide ones ran 3 epochs, so their last value is
  // higher); at epoch 1, where every trial has a value, `width` explains nothing and `lr` all.
  StudyReport r = Study();
  for (int i = 0; i < 24; ++i) {
    const bool wide = i % 2 == 0;
    const double at1 = 0.5 + 0.01 * (i / 2);
    auto t = Trial(i, 0.01, wide ? at1 + 0.3 : at1, i,
                   wide ? TrialState::kCompleted : TrialState::kStopped);
    t.record.params = {{"width", static_cast<int64_t>(wide ? 64 : 32)},
                       {"lr", 0.001 * (i / 2 + 1)}};
    t.reports.push_back(Report(i, 1, at1, "l"));
    if (wide) t.reports.push_back(Report(i, 3, at1 + 0.3, "l"));
    r.trials.push_back(t);
  }
  // Epoch 3 has 12 of 24 trials, at least a quarter and 8: it is the epoch to compare at.
  EXPECT_EQ(ImportanceEpoch(r), 3);
  const auto last = ParamImportance(r, /*epoch=*/0);
  EXPECT_EQ(last[0].param, "width");
  const auto at1 = ParamImportance(r, /*epoch=*/1);
  EXPECT_EQ(at1[0].param, "lr");
  EXPECT_LT(at1[1].share, 0.05);
  EXPECT_EQ(at1[1].param, "width");
  // Drop the wide trials' epoch 3 to fewer than 8: epoch 1 it is.
  for (int i = 0; i < 24; i += 4) r.trials[i].reports.pop_back();
  EXPECT_EQ(ImportanceEpoch(r), 1);
}

TEST(HtmlChartData, ImportanceOfTooFewTrialsIsZeroNotANumberFromNothing) {
  StudyReport r = Study();
  for (int i = 0; i < 3; ++i) {
    auto t = Trial(i, 0.01, 0.5 + i, i);
    t.record.params = {{"lr", 0.1 * i}};
    r.trials.push_back(t);
  }
  const auto importance = ParamImportance(r);
  ASSERT_EQ(importance.size(), 1u);
  EXPECT_EQ(importance[0].share, 0);
}

TEST(HtmlChartData, BestSoFarCarriesWhenEachImprovementEnded) {
  StudyReport r = Study();
  r.trials = {Trial(0, 0.10, 0.80, 100), Trial(1, 0.05, 0.70, 200), Trial(2, 0.20, 0.90, 300)};
  const auto curve = BestSoFarCurve(r);
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_EQ(curve[0].at, 100);
  EXPECT_EQ(curve[1].at, 300);
  EXPECT_DOUBLE_EQ(curve[1].dollars, 0.35);
}

TEST(HtmlChartData, DollarsToEachLevelComeFromTheBestSoFarCurve) {
  StudyReport r = Study();
  r.trials = {Trial(0, 0.10, 0.80, 1), Trial(1, 0.05, 0.82, 2), Trial(2, 0.20, 0.90, 3),
              Trial(3, 0.30, 0.85, 4), Trial(4, 0.01, 0.95, 5, TrialState::kFailed)};
  r.target = 0.95;  // only the failed trial "reached" it: not reached
  const auto levels = DollarsToLevels(r, 3);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_DOUBLE_EQ(levels[0].level, 0.80);
  EXPECT_DOUBLE_EQ(levels[0].dollars, 0.10);
  EXPECT_EQ(levels[0].trial, 0);
  EXPECT_DOUBLE_EQ(levels[1].level, 0.85);
  EXPECT_DOUBLE_EQ(levels[1].dollars, 0.35);  // #2 reached it, after #0 and #1 were paid
  EXPECT_EQ(levels[1].trial, 2);
  EXPECT_EQ(levels[2].trial, 2);
  EXPECT_FALSE(levels[3].reached);
  EXPECT_DOUBLE_EQ(levels[3].level, 0.95);
}

SegmentRecord Segment(const std::string& lease, int64_t n, double start, std::optional<double> end,
                      const std::string& reason = "completed", int64_t start_epoch = 0) {
  SegmentRecord s;
  s.lease_id = lease;
  s.worker_id = "w";
  s.study_id = 1;
  s.number = n;
  s.start = start;
  s.end = end;
  s.price_per_hour = 3600;  // a dollar a second keeps the arithmetic readable
  s.end_reason = reason;
  s.start_epoch = start_epoch;
  return s;
}

TEST(HtmlChartData, SpendCountsEachLeaseUntilThen) {
  const std::vector<SegmentRecord> segs = {Segment("a", 0, 0, 1), Segment("b", 1, 10, 12),
                                           Segment("c", 2, 20, std::nullopt)};
  EXPECT_DOUBLE_EQ(SpentAt(segs, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(SpentAt(segs, 11), 2);
  EXPECT_DOUBLE_EQ(SpentAt(segs, 25), 8);  // the open lease runs to `at`
  const auto series = SpendOverTime(segs, /*now=*/30, 4);
  ASSERT_EQ(series.size(), 4u);
  EXPECT_DOUBLE_EQ(series.front().at, 0);
  EXPECT_DOUBLE_EQ(series.back().at, 30);
  EXPECT_DOUBLE_EQ(series.back().dollars, 13);
  for (size_t i = 1; i < series.size(); ++i) EXPECT_GE(series[i].dollars, series[i - 1].dollars);
}

TEST(HtmlChartData, ForecastAppliesTheMeanTrialToTheTrialsLeftAndTheBudgetCapsIt) {
  StudyReport r = Study();
  r.study.record.created_at = 0;
  r.study.budget.max_trials = 4;
  auto t0 = Trial(0, 1, 0.5, 10);
  auto t1 = Trial(1, 1, 0.6, 20);
  auto t2 = Trial(2, 0.5, std::nullopt, 0, TrialState::kRunning);
  t2.record.created_at = 20;
  r.trials = {t0, t1, t2};
  const std::vector<SegmentRecord> segs = {Segment("a", 0, 0, 1), Segment("b", 1, 10, 11),
                                           Segment("c", 2, 29.5, std::nullopt)};
  Forecast f = ForecastFinish(r, segs, 30);
  ASSERT_TRUE(f.possible);
  // $2.5 spent; one trial not begun at $1; the running one has $0.5 to go.
  EXPECT_DOUBLE_EQ(f.dollars, 4.0);
  EXPECT_EQ(f.trials_ended, 2);
  EXPECT_EQ(f.trials_left, 2);
  EXPECT_DOUBLE_EQ(f.finish_at, 60);  // 2 trials in 30 s, 2 to go
  EXPECT_EQ(f.limited_by, "");
  r.study.budget.max_dollars = 3;
  f = ForecastFinish(r, segs, 30);
  EXPECT_DOUBLE_EQ(f.dollars, 3);
  EXPECT_EQ(f.limited_by, "max_dollars");
  // Before any trial ended there is nothing to forecast from.
  EXPECT_FALSE(ForecastFinish(r, segs, 5).possible);
}

TEST(HtmlChartData, MarkersShowStopsPausesPromotionsPreemptionsAndResumes) {
  TrialSummary t = Trial(3, 0.1, 0.8, 9);
  t.record.number = 3;
  t.reports = {Report(3, 1, 0.5, "l1"), Report(3, 2, 0.6, "l1", "PAUSE", "asha rung 2"),
               Report(3, 3, 0.7, "l2"), Report(3, 4, 0.8, "l3", "STOP", "median")};
  const std::vector<SegmentRecord> segs = {
      Segment("l1", 3, 0, 2, "paused"), Segment("l2", 3, 5, 8, "preempted", 2),
      Segment("l3", 3, 9, 10, "stopped", 3), Segment("other", 4, 0, 1, "preempted")};
  const auto marks = TrialMarkers(t, segs);
  std::vector<std::string> kinds;
  std::vector<int64_t> epochs;
  for (const auto& m : marks) kinds.push_back(m.kind), epochs.push_back(m.epoch);
  EXPECT_EQ(kinds, (std::vector<std::string>{"pause", "promote", "preempt", "resume", "stop"}));
  EXPECT_EQ(epochs, (std::vector<int64_t>{2, 2, 3, 3, 4}));
  EXPECT_EQ(marks[0].reason, "asha rung 2");
  EXPECT_EQ(marks[4].reason, "median");
}

TEST(HtmlChartData, DownsampleKeepsTheEndsAndAnEvenStride) {
  EXPECT_EQ(Downsample(10, 4), (std::vector<size_t>{0, 3, 6, 9}));
  EXPECT_EQ(Downsample(3, 5), (std::vector<size_t>{0, 1, 2}));
}

TEST(HtmlChartData, ManyTrialsDrawTheFrontierTheBestAndASample) {
  StudyReport r = Study();
  for (int i = 0; i < 100; ++i) r.trials.push_back(Trial(i, 0.01 * (i % 10 + 1), 0.01 * i, i));
  const auto drawn = TrialsToDraw(r, 10);
  EXPECT_LE(drawn.size(), 10u);
  const std::set<size_t> set(drawn.begin(), drawn.end());
  for (auto n : ParetoFrontier(r)) EXPECT_TRUE(set.count(static_cast<size_t>(n))) << n;
  EXPECT_TRUE(set.count(99));  // the best
  EXPECT_EQ(TrialsToDraw(r, 200).size(), 100u);
}

HtmlReport Page() {
  HtmlReport page;
  page.now = 1000;
  page.source = "hand.db";
  HtmlStudy s;
  s.report = Study();
  s.report.study.record.name = "<b>bold</b>";
  s.report.study.record.state = StudyState::kCompleted;
  s.report.study.record.ended_at = 50;
  s.report.study.best_trial = 1;
  for (int i = 0; i < 6; ++i) {
    auto t = Trial(i, 0.01 * (i + 1), 0.5 + 0.05 * i, 10 * (i + 1));
    t.record.params = {{"lr", 0.001 * (i + 1)}, {"opt", std::string("</script>")}};
    t.reports = {Report(i, 1, 0.4, "l" + std::to_string(i)),
                 Report(i, 2, 0.5 + 0.05 * i, "l" + std::to_string(i))};
    s.report.trials.push_back(t);
    s.segments.push_back(Segment("l" + std::to_string(i), i, 10.0 * i, 10.0 * i + 5));
  }
  page.studies.push_back(s);
  return page;
}

TEST(HtmlReport, EveryChartIsThereAndEveryMarkNamesATrialOfTheTable) {
  const std::string html = RenderHtmlReport(Page());
  for (const char* chart : {"best-dollars", "best-time", "pareto", "curves", "spend", "parallel",
                            "importance", "timeline"}) {
    EXPECT_NE(html.find(std::string("<svg class=\"chart ") + chart + "\""), std::string::npos)
        << chart;
  }
  // Offline: nothing is fetched.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  // Each trial's mark (data-t="STUDY-NUMBER") points at a row the table's data holds.
  std::set<std::string> marked;
  const std::regex mark("data-t=\"1-([0-9]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), mark); it != std::sregex_iterator();
       ++it) {
    marked.insert((*it)[1]);
  }
  EXPECT_EQ(marked, (std::set<std::string>{"0", "1", "2", "3", "4", "5"}));
  for (const auto& n : marked) EXPECT_NE(html.find("[" + n + ",\"COMPLETED\""), std::string::npos);
}

// Regression: with many parameters the parallel-coordinates chart's axis names overlapped.
TEST(HtmlReport, ManyParametersNamesDoNotOverlap) {
  HtmlStudy s;
  s.report = Study();
  for (int i = 0; i < 4; ++i) {
    auto t = Trial(i, 0.01, 0.5 + 0.1 * i, 10);
    for (int p = 0; p < 12; ++p) {
      t.record.params["parameter_number_" + std::to_string(p)] = 0.1 * (i + p);
    }
    s.report.trials.push_back(t);
  }
  const std::string svg = html::ParallelChart(s);
  // Each name's x, y and shown text; names in one row must be a name's width apart.
  const std::regex label(
      "<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" text-anchor=\"middle\" "
      "class=\"label\">([^<]*)<title>([^<]*)</title>");
  std::map<std::string, std::vector<std::pair<double, std::string>>> rows;
  std::set<std::string> titles;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator();
       ++it) {
    rows[(*it)[2]].emplace_back(std::stod((*it)[1]), (*it)[3]);
    titles.insert((*it)[4]);
  }
  EXPECT_EQ(titles.size(), 13u);  // 12 parameters and the objective, each whole in its title
  EXPECT_TRUE(titles.count("parameter_number_11"));
  EXPECT_EQ(rows.size(), 2u) << svg.substr(0, 3000);  // staggered in two rows
  for (const auto& [y, row] : rows) {
    for (size_t i = 1; i < row.size(); ++i) {
      // Shown text is ASCII but for the ellipsis (3 bytes, one character).
      const auto chars = [](const std::string& t) {
        return static_cast<double>(t.size() - 2 * (t.find("\u2026") != std::string::npos));
      };
      const double need = (chars(row[i - 1].second) + chars(row[i].second)) / 2 * 6.2;
      EXPECT_GE(row[i].first - row[i - 1].first, need)
          << row[i - 1].second << " and " << row[i].second << " at y " << y;
    }
  }
}

TEST(HtmlReport, NamesAndParametersAreEscapedSoTheyCannotBreakThePage) {
  const std::string html = RenderHtmlReport(Page());
  EXPECT_EQ(html.find("<b>bold</b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  // The parameter value "</script>" inside the table's JSON would end its <script> early.
  EXPECT_EQ(html.find("opt=</script>"), std::string::npos);
  EXPECT_NE(html.find("opt=<\\/script>"), std::string::npos);
}

TEST(HtmlReport, AnEmptyDatabaseGivesAPageThatSaysSo) {
  HtmlReport page;
  page.source = "empty.db";
  EXPECT_NE(RenderHtmlReport(page).find("No study in this database."), std::string::npos);
}

// Issue 17: `--html` into a folder that is not there yet makes it (as --out does); a path that
// cannot be a folder is named with why, not guessed at ("disk full or no permission?").
TEST(HtmlReportPage, WriteCreatesAMissingFolderOrNamesIt) {
  const auto base =
      std::filesystem::temp_directory_path() / ("sift-html-write-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  const std::string path = (base / "not" / "yet" / "report.html").string();
  EXPECT_EQ(WriteHtmlReport(Page(), path), "");
  EXPECT_TRUE(std::filesystem::exists(path));
  std::ofstream(base / "file") << "x";  // a file where a folder should be
  const std::string problem = WriteHtmlReport(Page(), (base / "file" / "report.html").string());
  EXPECT_NE(problem.find((base / "file").string() + ": cannot create the folder"),
            std::string::npos)
      << problem;
  EXPECT_EQ(problem.find("disk full"), std::string::npos) << problem;
  std::filesystem::remove_all(base);
}

}  // namespace html_report_test
}  // namespace sift::coordinator

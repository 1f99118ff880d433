// The HTML report of a study with several objectives and a constraint: the Pareto set table, a
// scatter per pair of objectives with the broken constraint shaded, the hypervolume charts; and
// the page in headless Chromium.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "coordinator/report/export_pick.h"
#include "coordinator/report/frontier.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/html_report.h"
#include "coordinator/report/study_reports.h"
#include "tests/coordinator/report/frontier_fixture.h"
#include "tests/coordinator/report/synthetic_study.h"
#include "tests/headless_chromium.h"

namespace sift::coordinator {
namespace frontier_charts_test {

// Three objectives (val_accuracy, dollars, inference_ms) and inference_ms <= 2: the constraint
// lies on an axis of two of the three pairs.
HtmlReport Page() {
  StudyReport r = TwoObjectiveStudy();
  r.objectives.push_back({"inference_ms", false});
  r.study.best_trial = 2;
  r.study.best_value = 0.90;
  HtmlReport page;
  page.now = 2000;
  page.source = "hand-made";
  HtmlStudy s;
  s.report = std::move(r);
  page.studies.push_back(std::move(s));
  return page;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The <svg> elements whose class starts with `chart`, each as its text.
std::vector<std::string> Charts(const std::string& html, const std::string& chart) {
  std::vector<std::string> out;
  const std::string open = "<svg class=\"chart " + chart;
  for (size_t at = html.find(open); at != std::string::npos; at = html.find(open, at + 1)) {
    out.push_back(html.substr(at, html.find("</svg>", at) - at));
  }
  return out;
}

TEST(FrontierCharts, APairPerTwoObjectivesAndTheConstraintShadedOnItsAxis) {
  const HtmlReport page = Page();
  const HtmlStudy& s = page.studies[0];
  const std::string html = RenderHtmlReport(page);
  const auto pairs = Charts(html, "objectives");
  ASSERT_EQ(pairs.size(), 3u);  // (accuracy, dollars), (accuracy, ms), (dollars, ms)
  EXPECT_EQ(Count(pairs[0], "class=\"infeasible\""), 0u);
  EXPECT_EQ(Count(pairs[1], "class=\"infeasible\""), 1u);
  EXPECT_EQ(Count(pairs[2], "class=\"infeasible\""), 1u);
  EXPECT_NE(pairs[1].find("inference_ms &lt;= 2"), std::string::npos) << pairs[1];
  // The Pareto set ringed: #1 and #2, and with speed counted #0 and #6 too; #3 hollow.
  for (const auto& chart : pairs) {
    EXPECT_EQ(Count(chart, "class=\"pt on\""), 4u) << chart;
    EXPECT_NE(chart.find("class=\"pt infeasible\" data-t=\"1-3\" data-m=\"infeasible "
                         "(inference_ms 3 &gt; 2)\""),
              std::string::npos)
        << chart;
    EXPECT_NE(chart.find("data-t=\"1-6\" data-m=\"val_accuracy 0.84, dollars $0.150000, "
                         "inference_ms 1, Pareto set\""),
              std::string::npos)
        << chart;
  }
  EXPECT_EQ(Charts(html, "hypervolume").size(), 2u);
  const std::string table = html::ParetoSetTable(s, FrontierOf(s.report));
  EXPECT_EQ(Count(table, "<tr><td data-t="), 4u) << table;
  // inference_ms is an objective too: its constraint adds no second column.
  EXPECT_NE(table.find("<th>val_accuracy (max)</th><th>dollars (min)</th><th>inference_ms (min)"
                       "</th><th>state</th>"),
            std::string::npos)
      << table;
}

TEST(FrontierCharts, ASingleObjectiveStudyHasNone) {
  HtmlReport page = Page();
  page.studies[0].report.objectives.clear();
  page.studies[0].report.constraints.clear();
  const std::string html = RenderHtmlReport(page);
  EXPECT_TRUE(Charts(html, "objectives").empty());
  EXPECT_TRUE(Charts(html, "hypervolume").empty());
  EXPECT_EQ(html.find("class=\"pareto\""), std::string::npos);
}

// A finished study of two objectives and a constraint on the training loss (the synthetic
// trials report it every epoch; those stopped at the first rung have not brought it under 1),
// written through the real SQLite Store.
constexpr const char* kStoredConfig = R"(name: stored-frontier
objectives:
  - {metric: val_accuracy, direction: maximize}
  - {metric: dollars, direction: minimize}
constraints:
  - {metric: train_loss, max: 1.0}
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
  dropout: {type: float, low: 0.0, high: 0.5}
trainer: {model: mlp, depth: 2}
searcher: {type: random}
scheduler: {type: asha, eta: 3, min_resource: 1}
budget: {max_trials: 60, max_epochs: 9, max_dollars: 0, max_hours: 0}
)";

std::string StoredStudy(const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "sift.db").string();
  auto store = OpenSqliteStore(db);
  testing::SyntheticStudy options;
  options.trials = 60;
  options.config_text = kStoredConfig;
  testing::WriteSyntheticStudy(*store, options);
  return db;
}

TEST(FrontierCharts, AStoredStudyReportsItsObjectivesAndParetoSet) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sift-frontier-store-" + std::to_string(getpid()));
  const std::string db = StoredStudy(dir);
  const auto reports = LoadStudyReports(db, 0);
  ASSERT_EQ(reports.size(), 1u);
  const StudyReport& r = reports[0];
  ASSERT_EQ(r.objectives.size(), 2u);
  EXPECT_EQ(r.objectives[1].metric, "dollars");
  ASSERT_EQ(r.constraints.size(), 1u);
  const Frontier f = FrontierOf(r);
  ASSERT_FALSE(f.pareto.empty());
  size_t infeasible = 0;
  for (const auto& t : f.trials) infeasible += t.scored && !t.feasible;
  EXPECT_GT(infeasible, 0u);  // stopped at the first rung
  // `sift export --pareto`: every trial of the set, one column per objective, and no other.
  const std::string set = FormatParetoSet(r);
  EXPECT_NE(set.find("over val_accuracy (maximize), dollars (minimize)"), std::string::npos) << set;
  EXPECT_EQ(Count(set, "\n"), 2 + f.pareto.size()) << set;
  for (int64_t n : f.pareto) {
    EXPECT_NE(
        set.find("\n" + std::string(6 - std::to_string(n).size(), ' ') + std::to_string(n) + "  "),
        std::string::npos)
        << n << "\n"
        << set;
    const FrontierTrial& t = f.trials[FrontierIndex(f, n)];
    EXPECT_TRUE(t.feasible);
    EXPECT_NE(TrialMetric(r.trials[FrontierIndex(f, n)], "train_loss"), std::nullopt);
  }
  // The page of it in Chromium: the scatter and the set's table drawn.
  const std::string path = (dir / "report.html").string();
  ASSERT_EQ(WriteHtmlReport(LoadHtmlReport(db, 0, std::nullopt), path), "");
  const testing::PageLoad loaded = testing::LoadPage(path);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.log;
  EXPECT_EQ(loaded.log.find("CONSOLE"), std::string::npos) << loaded.log;
  const auto pairs = Charts(loaded.dom, "objectives");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(Count(pairs[0], "class=\"pt on\""), f.pareto.size());
  EXPECT_EQ(Count(pairs[0], "class=\"pt infeasible\""), infeasible);
  // Only the set's points and the infeasible ones carry a mark: a dominated point's row says all.
  EXPECT_EQ(Count(pairs[0], "data-m="), f.pareto.size() + infeasible);
  EXPECT_EQ(Count(loaded.dom, "<tr><td data-t="), f.pareto.size());
  std::filesystem::remove_all(dir);
}

TEST(FrontierCharts, ThePageShowsThemInABrowser) {
  ASSERT_FALSE(testing::ChromiumPath().empty())
      << "no chromium: scripts/install-deps.sh installs it (Debian's `chromium` package)";
  const auto dir =
      std::filesystem::temp_directory_path() / ("sift-html-frontier-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "report.html").string();
  ASSERT_EQ(WriteHtmlReport(Page(), path), "");
  const testing::PageLoad loaded = testing::LoadPage(path);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.log;
  EXPECT_EQ(loaded.log.find("CONSOLE"), std::string::npos) << loaded.log;
  EXPECT_TRUE(std::regex_search(loaded.dom, std::regex("<body[^>]* data-js=\"ok\"")));
  // Every scatter and hypervolume chart holds trials' marks after the script ran.
  const auto pairs = Charts(loaded.dom, "objectives");
  const auto volumes = Charts(loaded.dom, "hypervolume");
  EXPECT_EQ(pairs.size(), 3u);
  EXPECT_EQ(volumes.size(), 2u);
  for (const auto& chart : pairs) EXPECT_NE(chart.find("data-t="), std::string::npos);
  for (const auto& chart : volumes) EXPECT_NE(chart.find("class=\"line\""), std::string::npos);
  // The Pareto set's table, and the trial table's rows marked as on it (bold) by the script.
  EXPECT_EQ(Count(loaded.dom, "<table class=\"pareto\">"), 1u);
  EXPECT_NE(loaded.dom.find("<tr id=\"t1-6\" class=\"on\""), std::string::npos);
  EXPECT_NE(loaded.dom.find("<tr id=\"t1-3\" class=\"\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace frontier_charts_test
}  // namespace sift::coordinator

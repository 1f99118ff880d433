// The HTML report of a study with several objectives and a constraint: the Pareto set table, a
// scatter per pair of objectives with the broken constraint shaded, the hypervolume charts; and
// the page in headless Chromium.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/html_report.h"
#include "tests/coordinator/report/frontier_fixture.h"
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
    EXPECT_NE(chart.find("class=\"pt infeasible\" data-t=\"1-3\""), std::string::npos);
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

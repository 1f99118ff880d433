// The HTML report opened in headless Chromium: its scripts run without a console message, every
// chart draws, and the page shows a trial's parameters; on two small studies side by side and on
// one of 10,000 trials.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "coordinator/report/html/html_report.h"
#include "coordinator/store/store.h"
#include "tests/coordinator/report/synthetic_study.h"
#include "tests/headless_chromium.h"

namespace sift::testing {
namespace html_report_browser_test {

std::string Scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sift-html-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Writes `studies` synthetic studies into a fresh database and the report of it; returns its path.
std::string WriteReport(const std::string& dir, int studies, int64_t trials) {
  const std::string db = dir + "/sift.db";
  {
    auto store = coordinator::OpenSqliteStore(db);
    for (int i = 0; i < studies; ++i) {
      SyntheticStudy options;
      options.trials = trials;
      options.seed = static_cast<uint64_t>(i + 1);
      options.name = "synthetic-" + std::to_string(i + 1);
      WriteSyntheticStudy(*store, options);
    }
  }
  const std::string html = dir + "/report.html";
  const auto report = coordinator::LoadHtmlReport(db, 0, std::nullopt);
  EXPECT_EQ(coordinator::WriteHtmlReport(report, html), "");
  return html;
}

std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  return std::regex_search(dom, m, std::regex("<body[^>]* " + name + "=\"([^\"]*)\"")) ? m[1].str()
                                                                                       : "";
}

// What every report must do in a browser; `charts`: how many it draws.
void ExpectPageWorks(const std::string& html, int charts) {
  ASSERT_FALSE(ChromiumPath().empty())
      << "no chromium: scripts/install-deps.sh installs it (Debian's `chromium` package)";
  const PageLoad page = LoadPage(html);
  ASSERT_EQ(page.exit_code, 0) << page.log;
  // Any console line (an uncaught error is one) means the page's script misbehaved.
  EXPECT_EQ(page.log.find("CONSOLE"), std::string::npos) << page.log;
  EXPECT_EQ(Attribute(page.dom, "data-js"), "ok");
  // Every chart has drawn marks (the script counts the <svg>s holding a trial's mark, a data line
  // or a bar; axes and legends do not count).
  EXPECT_EQ(Attribute(page.dom, "data-charts"),
            std::to_string(charts) + " " + std::to_string(charts));
  // The script filled each study's panel from the table's data: the best trial's parameters.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page.dom, m, std::regex("id=\"detail-1\"[^>]*>(.*?)</div>")))
      << page.dom.substr(0, 2000);
  EXPECT_NE(m[1].str().find("<b>params</b> dropout="), std::string::npos) << m[1];
  EXPECT_NE(m[1].str().find("best trial"), std::string::npos) << m[1];
  // And rendered the table's rows, which hold every trial's parameters.
  EXPECT_NE(page.dom.find("<tr id=\"t1-0\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(page.dom, std::regex("<tr id=\"t1-0\"[^>]*>.*?optimizer=")));
}

TEST(HtmlReportBrowser, TwoStudiesSideBySide) {
  const std::string dir = Scratch("two");
  const std::string html = WriteReport(dir, 2, 60);
  // Two comparison charts, then six per study.
  ExpectPageWorks(html, 2 + 6 * 2);
  std::filesystem::remove_all(dir);
}

TEST(HtmlReportBrowser, TenThousandTrialsStayUsable) {
  const std::string dir = Scratch("10k");
  const std::string html = WriteReport(dir, 1, 10000);
  ExpectPageWorks(html, 2 + 6);
  const std::string text = [&] {
    std::ifstream f(html);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  // Curves are sampled and said to be (the figures are in bench/README.md).
  EXPECT_NE(text.find("of 10000 trials' curves drawn"), std::string::npos);
  EXPECT_LT(text.size(), 8u << 20);
  std::filesystem::remove_all(dir);
}

}  // namespace html_report_browser_test
}  // namespace sift::testing

// The HTML report that `sift run` writes, and `sift report --run DIR --html FILE`, on a study it
// trained (ASHA with promotions, simulated spot preemptions), opened in headless Chromium.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/headless_chromium.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace html_report_test {

TEST(HtmlReport, FinishedStudyOpensInABrowserWithEveryChartDrawn) {
  ASSERT_FALSE(ChromiumPath().empty())
      << "no chromium: scripts/install-deps.sh installs it (Debian's `chromium` package)";
  const std::string dir = TempDir("html-report");
  std::ofstream(dir + "/asha.yaml") << R"(name: html-report
search_space:
  lr: {type: float, low: 3.0e-4, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 64}
trainer: {model: mlp, depth: 1, batch_size: 128}
searcher: {type: sobol}
scheduler: {type: asha, eta: 2, min_resource: 1, variant: promotion}
budget: {max_trials: 6, max_epochs: 4}
data: {train_limit: 1024, val_size: 256, test_limit: 200}
worker: {market: spot}
)";
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", dir + "/asha.yaml", "--out", dir + "/run",
                        "--workers", "1", "--simulate-preemption", "0.3", "--preemption-seed", "3"},
                       &output, 300),
            0)
      << output;
  // `sift run` leaves the page in its run directory and says so.
  EXPECT_TRUE(std::filesystem::exists(dir + "/run/report.html"));
  EXPECT_NE(output.find("/run/report.html (open it in a browser)"), std::string::npos) << output;
  const std::string html = dir + "/report.html";
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "report", "--run", dir + "/run", "--html", html}, &output), 0)
      << output;
  EXPECT_NE(output.find("1 studies, 6 trials"), std::string::npos) << output;

  // The summary names the best model's file with its folder, as `sift report` prints it.
  const std::string text = Read(html);
  EXPECT_NE(text.find("model: " + dir + "/run/checkpoints/study-1/trial-"), std::string::npos);
  const PageLoad page = LoadPage(html);
  ASSERT_EQ(page.exit_code, 0) << page.log;
  EXPECT_EQ(page.log.find("CONSOLE"), std::string::npos) << page.log;
  EXPECT_NE(page.dom.find("data-js=\"ok\""), std::string::npos);
  EXPECT_NE(page.dom.find("data-charts=\"8 8\""), std::string::npos) << page.dom.substr(0, 1000);
  // The best trial's parameters, filled in by the page's script from the table's data.
  EXPECT_TRUE(std::regex_search(page.dom, std::regex("id=\"detail-1\"[^>]*>[^<]*<b>trial</b>.*?"
                                                     "<b>params</b> hidden=[0-9]+ lr=")))
      << page.dom.substr(0, 3000);
  // ASHA paused trials at its rungs and promoted some: both marked on the curves.
  EXPECT_NE(page.dom.find("class=\"mark pause\""), std::string::npos);
  EXPECT_NE(page.dom.find("class=\"mark promote\""), std::string::npos);
}

}  // namespace html_report_test
}  // namespace sift::testing

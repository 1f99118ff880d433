// The HTML report and the live page for a matrix of studies, each opened in headless Chromium:
// one study per example config (examples/**/*.yaml, found at run time, so a new example is
// covered without a word here), and one with every budget key, tags, alerts, preemptions and a
// diverged trial. The report paths had tests, but none with a dollar budget, which is why a
// malformed format string in the spend chart's budget line shipped (every study with
// budget.max_dollars got no report and no live page).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "common/config/config.h"
#include "common/config/config_limits.h"
#include "coordinator/http/live.h"
#include "coordinator/report/html/html_report.h"
#include "coordinator/rpc/server.h"
#include "coordinator/store/store.h"
#include "tests/coordinator/report/synthetic_study.h"
#include "tests/headless_chromium.h"

namespace sift::testing {
namespace html_report_matrix_test {

namespace fs = std::filesystem;

constexpr const char* kEveryKey = R"(name: every-key
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
  hidden: {type: int, low: 32, high: 512, scale: log}
  optimizer: {type: categorical, choices: [adam, sgd]}
trainer: {model: mlp}
searcher: {type: tpe}
scheduler: {type: asha, eta: 3, min_resource: 1}
budget: {max_trials: 40, max_epochs: 9, max_dollars: 0.05, max_hours: 2}
tags: {team: vision, project: frontier}
alerts: {thresholds: [50, 80, 100], command: "true"}
worker: {market: spot}
)";

std::string SourceDir() {
  const char* env = std::getenv("SIFT_SOURCE_DIR");
  return env != nullptr ? env : SIFT_SOURCE_DIR_DEFAULT;
}

std::string Read(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Every example config, relative to examples/, and "every-key" for the study above.
std::vector<std::string> Cases() {
  std::vector<std::string> out;
  const fs::path root = fs::path(SourceDir()) / "examples";
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
    if (e.path().extension() == ".yaml") out.push_back(fs::relative(e.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  out.push_back("every-key");
  return out;
}

std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  return std::regex_search(dom, m, std::regex("<body[^>]* " + name + "=\"([^\"]*)\"")) ? m[1].str()
                                                                                       : "";
}

// The charts a study's page draws: 2 comparison and 6 for the study, and with several objectives
// or constraints a scatter per pair of objectives and two hypervolume charts.
int ChartsOf(const std::string& config_text) {
  common::StudyConfig config;
  EXPECT_EQ(common::ParseStudyConfig(config_text, "matrix", &config, common::ConfigLimits::None()),
            std::vector<std::string>{});
  const int k = static_cast<int>(config.objectives.size());
  const bool frontier = k > 1 || !config.constraints.empty();
  return 8 + (frontier ? k * (k - 1) / 2 + 2 : 0);
}

// What a person sees work: the scripts ran without a console line, all `charts` have marks, and
// the detail panel shows the best trial.
void ExpectPageWorks(const PageLoad& page, int charts, const std::string& what) {
  ASSERT_EQ(page.exit_code, 0) << what << "\n" << page.log;
  EXPECT_EQ(page.log.find("CONSOLE"), std::string::npos) << what << "\n" << page.log;
  EXPECT_EQ(Attribute(page.dom, "data-js"), "ok") << what;
  EXPECT_EQ(Attribute(page.dom, "data-charts"),
            std::to_string(charts) + " " + std::to_string(charts))
      << what;
  EXPECT_TRUE(std::regex_search(page.dom, std::regex("id=\"detail-1\"[^>]*>.*?best trial")))
      << what << "\n"
      << page.dom.substr(0, 2000);
}

class HtmlReportMatrix : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ChromiumPath().empty())
        << "no chromium: scripts/install-deps.sh installs it (Debian's `chromium` package)";
    std::string name = GetParam();
    std::replace_if(
        name.begin(), name.end(),
        [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '-');
    dir_ = (fs::temp_directory_path() / ("sift-matrix-" + name + "-" + std::to_string(getpid())))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_P(HtmlReportMatrix, ReportAndLivePageDrawEveryChart) {
  const bool every_key = GetParam() == "every-key";
  SyntheticStudy study;
  study.trials = 30;
  study.workers = 4;
  study.seed = 11;
  study.config_text = every_key ? kEveryKey : Read(SourceDir() + "/examples/" + GetParam());
  study.preempt_chance = every_key ? 0.3 : 0.05;
  study.diverged = every_key ? 1 : 0;
  study.alerts = every_key;
  const std::string db = dir_ + "/sift.db";
  {
    auto store = coordinator::OpenSqliteStore(db);
    WriteSyntheticStudy(*store, study);
  }

  // The report file, as `sift report --html` writes it.
  const std::string html = dir_ + "/report.html";
  ASSERT_EQ(coordinator::WriteHtmlReport(coordinator::LoadHtmlReport(db, 0, std::nullopt), html),
            "");
  const std::string text = Read(html);
  if (every_key) {
    EXPECT_NE(text.find("class=\"budget\""), std::string::npos);  // the dollar budget's line
    EXPECT_NE(text.find("DIVERGED"), std::string::npos);
  }
  const int charts = ChartsOf(study.config_text);
  ExpectPageWorks(LoadPage(html), charts, "report of " + GetParam());

  // The live page, as `sift coordinator --http` serves it.
  coordinator::Coordinator coordinator(coordinator::OpenSqliteStore(db), {});
  coordinator::Server server(&coordinator, "127.0.0.1:0");
  coordinator::LiveHttp live("127.0.0.1:0", &coordinator, &server,
                             coordinator::HtmlReportPage(db, /*refresh_s=*/3600));
  const PageLoad page = LoadUrl("http://127.0.0.1:" + std::to_string(live.port()) + "/");
  EXPECT_NE(page.dom.find("http-equiv=\"refresh\""), std::string::npos);
  ExpectPageWorks(page, charts, "live page of " + GetParam());
  server.Shutdown();
}

INSTANTIATE_TEST_SUITE_P(Examples, HtmlReportMatrix, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace html_report_matrix_test
}  // namespace sift::testing

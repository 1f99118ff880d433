// The pieces behind `--http`: request parsing, label escaping, the RPC histogram's text, and the
// study series.
#include <gtest/gtest.h>

#include "coordinator/core/study_metrics.h"
#include "coordinator/http/endpoint.h"
#include "coordinator/rpc/metrics.h"

namespace sift::coordinator {
namespace http_metrics_test {

TEST(HttpRequest, ParsesPathQueryAndHeaders) {
  HttpRequest r;
  ASSERT_EQ(ParseHttpRequest("GET /metrics?token=a%2Bb&x HTTP/1.1\r\nHost: h\r\n"
                             "Authorization:  Bearer t0k \r\n",
                             &r),
            "");
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/metrics");
  EXPECT_EQ(r.query.at("token"), "a+b");
  EXPECT_EQ(r.query.at("x"), "");
  EXPECT_EQ(r.headers.at("authorization"), "Bearer t0k");
  EXPECT_EQ(r.headers.at("host"), "h");
}

TEST(HttpRequest, NamesWhatIsWrong) {
  HttpRequest r;
  EXPECT_EQ(ParseHttpRequest("GARBAGE", &r), "malformed request line");
  EXPECT_EQ(ParseHttpRequest("GET metrics HTTP/1.1", &r), "the target must be a path");
  EXPECT_EQ(ParseHttpRequest("GET / HTTP/1.1\r\nno colon here", &r), "malformed header line");
}

TEST(PrometheusText, EscapesLabelValues) {
  EXPECT_EQ(PrometheusLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(PrometheusText, RpcHistogramIsCumulativeWithCountsByCode) {
  RpcMetrics m;
  m.Observe("/sift.v1.Workers/ReportProgress", 0, 0.0004);
  m.Observe("/sift.v1.Workers/ReportProgress", 0, 0.003);
  m.Observe("/sift.v1.Workers/ReportProgress", 5, 10.0);
  const std::string text = m.PrometheusText();
  const std::string method = "method=\"/sift.v1.Workers/ReportProgress\"";
  EXPECT_NE(text.find("sift_rpc_total{" + method + ",code=\"OK\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("sift_rpc_total{" + method + ",code=\"NOT_FOUND\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("sift_rpc_duration_seconds_bucket{" + method + ",le=\"0.0005\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_rpc_duration_seconds_bucket{" + method + ",le=\"0.005\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_rpc_duration_seconds_bucket{" + method + ",le=\"5\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_rpc_duration_seconds_bucket{" + method + ",le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_rpc_duration_seconds_count{" + method + "} 3\n"), std::string::npos);
}

TEST(PrometheusText, StudySeriesCoverEveryStateAndOmitAMissingBest) {
  StudySummary s;
  s.record.id = 7;
  s.record.name = "my \"study\"";
  s.by_state = {{"COMPLETED", 3}, {"RUNNING", 1}};
  s.dollars = 0.25;
  s.preemptions = 2;
  const std::string text = StudyMetricsText({s});
  const std::string labels = "study=\"7\",name=\"my \\\"study\\\"\"";
  EXPECT_NE(text.find("sift_study_trials{" + labels + ",state=\"COMPLETED\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_study_trials{" + labels + ",state=\"DIVERGED\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_study_dollars{" + labels + "} 0.25\n"), std::string::npos);
  EXPECT_NE(text.find("sift_study_preemptions_total{" + labels + "} 2\n"), std::string::npos);
  EXPECT_EQ(text.find("sift_study_best_objective{"), std::string::npos);
  // One objective: no frontier series.
  EXPECT_EQ(text.find("sift_study_hypervolume{"), std::string::npos);
  EXPECT_EQ(text.find("sift_study_pareto_trials{"), std::string::npos);
}

TEST(PrometheusText, SeveralObjectivesCarryTheParetoSetAndItsHypervolume) {
  StudySummary s;
  s.record.id = 3;
  s.record.name = "frontier";
  s.objectives = {{"val_accuracy", true}, {"dollars", false}};
  const std::string before = StudyMetricsText({s});
  EXPECT_NE(before.find("sift_study_pareto_trials{study=\"3\",name=\"frontier\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(before.find("sift_study_hypervolume{"), std::string::npos);  // no trial ended yet
  s.pareto_trials = 2;
  s.hypervolume = 0.5;
  const std::string text = StudyMetricsText({s});
  EXPECT_NE(text.find("sift_study_hypervolume{study=\"3\",name=\"frontier\"} 0.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("sift_study_pareto_trials{study=\"3\",name=\"frontier\"} 2\n"),
            std::string::npos);
}

}  // namespace http_metrics_test
}  // namespace sift::coordinator

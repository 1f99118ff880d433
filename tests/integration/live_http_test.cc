// `sift coordinator --http`: the live page and /metrics over a real socket, behind the roles,
// while a real study runs; the metrics are checked against the database.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "coordinator/rpc/client.h"
#include "tests/http_test_client.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"
#include "tests/test_pki.h"

namespace sift::testing {
namespace live_http_test {

constexpr const char* kWorker = "w0rker-live-0123456789abcdef";
constexpr const char* kUser = "us3r-live-0123456789abcdef";
constexpr const char* kViewer = "vi3wer-live-0123456789abcdef";

// A plain HTTP/1.1 GET to 127.0.0.1:port, as curl or a browser would send it.
HttpReply Get(int port, const std::string& target, const std::string& bearer = "") {
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n";
  if (!bearer.empty()) req += "Authorization: Bearer " + bearer + "\r\n";
  return HttpExchange(port, req + "\r\n");
}

int HttpPort(const std::string& log) {
  for (int i = 0; i < 200; ++i) {
    std::smatch m;
    const std::string text = Read(log);
    if (std::regex_search(text, m, std::regex("http on (\\d+)"))) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// Every sample line of the Prometheus text format: name{labels} value. Returns "" or the first
// line that is not one, and fills `samples` keyed by "name{labels}".
std::string ParsePrometheus(const std::string& text, std::map<std::string, double>* samples) {
  static const std::regex kSample(
      R"re(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})?) (\S+))re");
  static const std::regex kComment(R"(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, kComment)) continue;
    if (!std::regex_match(line, m, kSample)) return line;
    const std::string v = m[5];
    (*samples)[m[1]] = v == "+Inf" ? 1e308 : std::stod(v);
  }
  return "";
}

TEST(LiveHttp, MetricsAndThePageNeedAReadTokenFollowTheStudyAndMatchTheDatabase) {
  const std::string dir = TempDir("live-http");
  const std::string creds =
      WriteFile(dir + "/credentials", std::string("worker ") + kWorker + "\nuser " + kUser +
                                          "\nviewer " + kViewer + "\n");
  chmod(creds.c_str(), 0600);
  std::unique_ptr<Process> coordinator;
  const int port =
      StartCoordinator(&coordinator, dir, {"--credentials-file", creds, "--http", "127.0.0.1:0"});
  ASSERT_GT(port, 0);
  const int http = HttpPort(dir + "/coordinator.log");
  ASSERT_GT(http, 0) << coordinator->Log();

  EXPECT_EQ(Get(http, "/healthz").status, 200);
  EXPECT_EQ(Get(http, "/metrics").status, 401);
  EXPECT_EQ(Get(http, "/metrics", "wrong").status, 401);
  EXPECT_EQ(Get(http, "/metrics", kWorker).status, 403);  // workers do not read studies
  EXPECT_EQ(Get(http, "/metrics", kViewer).status, 200);
  // The URL's token is traded for a session cookie and a redirect (coordinator/http/live.h).
  EXPECT_EQ(Get(http, std::string("/?token=") + kViewer).status, 303);
  EXPECT_EQ(Get(http, "/nope", kViewer).status, 404);

  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string user_token = WriteFile(dir + "/user.token", kUser);
  chmod(user_token.c_str(), 0600);
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", R"(name: live
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
trainer: {model: mlp, hidden: 32, depth: 1, batch_size: 128}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 4, max_epochs: 2}
data: {train_limit: 1024, val_size: 256, test_limit: 200}
)"),
                        "--coordinator", address, "--token-file", user_token},
                       &output),
            0)
      << output;
  const std::string before = Get(http, "/", kViewer).body;
  EXPECT_NE(before.find("live"), std::string::npos) << before;
  const std::string worker_token = WriteFile(dir + "/worker.token", kWorker);
  chmod(worker_token.c_str(), 0600);
  Process worker({BinDir() + "/sift-worker", "--coordinator", address, "--token-file", worker_token,
                  "--name", "w0", "--threads", "1", "--cache-dir", dir + "/cache"},
                 dir + "/worker.log");
  // The page follows the study: a trial that finishes shows up on a later request.
  std::string later;
  for (int i = 0; i < 1200; ++i) {
    later = Get(http, "/", kViewer).body;
    if (later.find("COMPLETED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(before.find("COMPLETED"), std::string::npos) << before;
  EXPECT_NE(later.find("COMPLETED"), std::string::npos) << later << worker.Log();

  v1::Study study = WaitForStudyEnd(sift::coordinator::MakeChannel(address), kViewer, 180);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << worker.Log();
  const HttpReply metrics = Get(http, "/metrics", kViewer);
  ASSERT_EQ(metrics.status, 200);
  std::map<std::string, double> samples;
  EXPECT_EQ(ParsePrometheus(metrics.body, &samples), "") << metrics.body;

  SQLite::Database db(dir + "/sift.db", SQLite::OPEN_READONLY);
  const auto count = [&](const std::string& sql) { return db.execAndGet(sql).getInt64(); };
  EXPECT_EQ(samples[R"(sift_study_trials{study="1",name="live",state="COMPLETED"})"],
            count("SELECT COUNT(*) FROM trials WHERE state='COMPLETED'"));
  EXPECT_EQ(samples[R"(sift_rpc_total{method="/sift.v1.Workers/ReportProgress",code="OK"})"],
            count("SELECT COUNT(*) FROM reports"));
  EXPECT_EQ(samples[R"(sift_study_preemptions_total{study="1",name="live"})"],
            count("SELECT COUNT(*) FROM segments WHERE end_reason='preempted'"));
  EXPECT_GT(samples[R"(sift_study_dollars{study="1",name="live"})"], 0);
  // The histogram's +Inf bucket counts every call.
  EXPECT_EQ(
      samples
          [R"(sift_rpc_duration_seconds_bucket{method="/sift.v1.Workers/ReportProgress",le="+Inf"})"],
      count("SELECT COUNT(*) FROM reports"));
  EXPECT_EQ(coordinator->Log().find(kViewer), std::string::npos) << "a token in the log";
}

// --http takes the gRPC port's --tls-cert/--tls-key, and plaintext off loopback needs asking.
TEST(LiveHttp, ServesTlsWithTheGrpcCertificateAndRefusesPlaintextOffLoopback) {
  const std::string dir = TempDir("live-http-tls");
  TestPki pki;
  ASSERT_EQ(MakeTestPki(dir, &pki), "");
  std::unique_ptr<Process> coordinator;
  ASSERT_GT(StartCoordinator(&coordinator, dir,
                             {"--tls-cert", pki.server_cert, "--tls-key", pki.server_key, "--http",
                              "127.0.0.1:0"}),
            0);
  const int http = HttpPort(dir + "/coordinator.log");
  ASSERT_GT(http, 0) << coordinator->Log();
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(HttpExchange(http, get, pki.ca).status, 200) << coordinator->Log();
  EXPECT_EQ(HttpExchange(http, get, "", 2).status, 0);  // no plaintext answer on the TLS port

  const std::vector<std::string> off_loopback = {
      BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db",
      dir + "/open.db",   "--http",      "0.0.0.0:0"};
  std::string output;
  EXPECT_NE(RunCommand(off_loopback, &output, 30), 0);
  EXPECT_NE(output.find("--http-plaintext"), std::string::npos) << output;
}

}  // namespace live_http_test
}  // namespace sift::testing

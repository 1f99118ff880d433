// The live page's token: given once in the URL, traded for an HttpOnly, SameSite=Strict session
// cookie and a redirect, and never written to the coordinator's log.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

#include "coordinator/http/live.h"
#include "coordinator/store/store.h"
#include "tests/http_test_client.h"
#include "tests/test_pki.h"

namespace sift::coordinator {
namespace live_http_session_test {

using testing::HttpExchange;
using testing::HttpReply;

constexpr const char* kViewer = "vi3wer-session-0123456789abcdef";

std::string Get(const std::string& target, const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + extra + "\r\n";
}

class LiveHttpSession : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::HttpTestDir("live-session");
    // Everything the coordinator logs, at every level, to check for the token.
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
    spdlog::default_logger()->sinks().push_back(sink_);
    previous_level_ = spdlog::get_level();
    spdlog::set_level(spdlog::level::trace);
    coordinator_ =
        std::make_unique<Coordinator>(OpenSqliteStore(dir_ + "/sift.db"), CoordinatorOptions{});
    ServerSecurity security;
    ASSERT_EQ(security.credentials.Add(common::Role::kViewer, kViewer, "test"), "");
    server_ = std::make_unique<Server>(coordinator_.get(), "127.0.0.1:0", std::move(security));
  }
  void TearDown() override {
    server_->Shutdown();
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::find(sinks.begin(), sinks.end(), sink_));
    spdlog::set_level(previous_level_);
  }

  // The exchange, then the page with the cookie; returns the Set-Cookie value.
  std::string Exchange(const LiveHttp& live, const std::string& ca) {
    const HttpReply r = HttpExchange(live.port(), Get(std::string("/?token=") + kViewer), ca);
    EXPECT_EQ(r.status, 303) << r.head;
    EXPECT_EQ(r.Header("Location"), "/");
    const std::string cookie = r.Header("Set-Cookie");
    EXPECT_EQ(cookie.rfind("sift_session=", 0), 0u) << cookie;
    EXPECT_NE(cookie.find("; HttpOnly"), std::string::npos) << cookie;
    EXPECT_NE(cookie.find("; SameSite=Strict"), std::string::npos) << cookie;
    EXPECT_EQ(cookie.find(kViewer), std::string::npos);
    const std::string session = cookie.substr(0, cookie.find(';'));
    const HttpReply page = HttpExchange(live.port(), Get("/", "Cookie: " + session + "\r\n"), ca);
    EXPECT_EQ(page.status, 200) << page.head << page.body;
    EXPECT_NE(page.body.find("<html"), std::string::npos);
    return cookie;
  }

  std::string dir_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  spdlog::level::level_enum previous_level_ = spdlog::level::info;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
};

TEST_F(LiveHttpSession, TheUrlTokenBecomesAnHttpOnlyStrictCookieAndIsNeverLogged) {
  LiveHttp live("127.0.0.1:0", coordinator_.get(), server_.get());
  const std::string cookie = Exchange(live, "");
  EXPECT_EQ(cookie.find("Secure"), std::string::npos);  // plaintext loopback: no TLS to need

  EXPECT_EQ(HttpExchange(live.port(), Get("/")).status, 401);
  EXPECT_EQ(HttpExchange(live.port(), Get("/", "Cookie: sift_session=forged\r\n")).status, 401);
  const HttpReply wrong = HttpExchange(live.port(), Get("/?token=wrong"));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.Header("Set-Cookie"), "");
  // Prometheus sends the token as a header, and gets the metrics without a redirect.
  EXPECT_EQ(HttpExchange(live.port(),
                         Get("/metrics", std::string("Authorization: Bearer ") + kViewer + "\r\n"))
                .status,
            200);
  // The redirect goes to a known page only: a decoded path is never echoed into Location.
  const HttpReply other = HttpExchange(live.port(), Get(std::string("/x?token=") + kViewer));
  EXPECT_EQ(other.Header("Location"), "/");
  EXPECT_EQ(
      HttpExchange(live.port(), Get(std::string("/metrics?token=") + kViewer)).Header("Location"),
      "/metrics");
  spdlog::default_logger()->flush();
  EXPECT_EQ(log_.str().find(kViewer), std::string::npos) << log_.str();
}

TEST_F(LiveHttpSession, UnderTlsTheCookieIsSecure) {
  testing::TestPki pki;
  ASSERT_EQ(testing::MakeTestPki(dir_, &pki), "");
  HttpOptions options;
  options.tls_cert = pki.server_cert;
  options.tls_key = pki.server_key;
  LiveHttp live("127.0.0.1:0", coordinator_.get(), server_.get(), TextReportPage, options);
  EXPECT_NE(Exchange(live, pki.ca).find("; Secure"), std::string::npos);
  spdlog::default_logger()->flush();
  EXPECT_EQ(log_.str().find(kViewer), std::string::npos) << log_.str();
}

TEST(HttpSessions, ExpireAndStayBounded) {
  HttpSessions expired(std::chrono::seconds(0));
  EXPECT_EQ(expired.Find(expired.Open("Bearer a")), "");
  HttpSessions two(std::chrono::hours(1), 2);
  const std::string a = two.Open("Bearer a");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const std::string b = two.Open("Bearer b");
  const std::string c = two.Open("Bearer c");
  EXPECT_EQ(two.Find(a), "");  // the oldest made room
  EXPECT_EQ(two.Find(b), "Bearer b");
  EXPECT_EQ(two.Find(c), "Bearer c");
  EXPECT_EQ(a.size(), 64u);
}

}  // namespace live_http_session_test
}  // namespace sift::coordinator

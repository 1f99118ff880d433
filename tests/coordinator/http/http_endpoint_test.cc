// The --http endpoint's bounds, each over a real socket: idle and slow clients, the connection
// cap, the request size limits, TLS, and the refusal of plaintext off loopback.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "coordinator/http/endpoint.h"
#include "tests/http_test_client.h"
#include "tests/test_pki.h"

namespace sift::coordinator {
namespace http_endpoint_test {

using testing::HttpExchange;
using testing::HttpReply;

HttpResponse Hello(const HttpRequest& req) { return {200, "text/plain", "hello " + req.path}; }

constexpr const char* kGet = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";

// Whether the server has closed `fd` (EOF or reset) within `timeout_s`.
bool ClosedByServer(int fd, double timeout_s) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) <= 0) return false;
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

TEST(HttpScan, BoundsTheHeadTheHeaderCountAndTheBody) {
  HttpLimits limits;
  limits.max_head_bytes = 100;
  limits.max_headers = 3;
  limits.max_body_bytes = 10;
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nHost: h", limits).state, HttpRequestScan::kNeedMore);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nHost: h\r\n\r\n", limits).state,
            HttpRequestScan::kComplete);
  // Over the head limit before its end arrives: answered at once, not waited for.
  EXPECT_EQ(ScanHttpRequest("GET /" + std::string(200, 'a'), limits).status, 431);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n", limits).status,
            431);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", limits).status, 413);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nab", limits).state,
            HttpRequestScan::kNeedMore);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", limits).state,
            HttpRequestScan::kComplete);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", limits).status, 400);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", limits).status,
            400);
  EXPECT_EQ(ScanHttpRequest("GET /a%0d%0aSet-Cookie:x HTTP/1.1\r\n\r\n", limits).status, 400);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nbad name: x\r\n\r\n", limits).status, 400);
}

TEST(HttpScan, ReadsCookies) {
  EXPECT_EQ(CookieValue("a=1; sift_session=abc; b=2", "sift_session"), "abc");
  EXPECT_EQ(CookieValue("xsift_session=abc", "sift_session"), "");
  EXPECT_EQ(CookieValue("", "sift_session"), "");
}

// The attack: idle connections, each with half a request line, used to hold the port.
TEST(HttpEndpoint, TwoHundredIdleConnectionsDoNotDelayAnAnswer) {
  HttpEndpoint endpoint("127.0.0.1:0", Hello);
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    const int fd = testing::ConnectLoopback(endpoint.port());
    ASSERT_GE(fd, 0);
    send(fd, "GET /metr", 9, MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  const HttpReply r = HttpExchange(endpoint.port(), kGet);
  EXPECT_EQ(r.status, 200);
  EXPECT_LT(r.seconds, 1.0);
  for (int fd : idle) close(fd);
}

TEST(HttpEndpoint, AtTheConnectionCapTheOldestUnfinishedRequestMakesRoom) {
  HttpOptions options;
  options.limits.max_connections = 8;
  HttpEndpoint endpoint("127.0.0.1:0", Hello, options);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(testing::ConnectLoopback(endpoint.port()));
    send(idle.back(), "GET /", 5, MSG_NOSIGNAL);
  }
  const HttpReply r = HttpExchange(endpoint.port(), kGet);
  EXPECT_EQ(r.status, 200);
  EXPECT_LT(r.seconds, 1.0);
  int closed = 0;
  for (int fd : idle) closed += ClosedByServer(fd, 0.2);
  EXPECT_GE(closed, 13);  // 20 + 1 connections, 8 kept
  for (int fd : idle) close(fd);
}

TEST(HttpEndpoint, ASlowClientIsCutOffAtTheDeadline) {
  HttpOptions options;
  options.limits.request_deadline_s = 2;
  HttpEndpoint endpoint("127.0.0.1:0", Hello, options);
  const int fd = testing::ConnectLoopback(endpoint.port());
  const auto start = std::chrono::steady_clock::now();
  const std::string request = kGet;
  bool cut = false;
  // One byte a second: the whole request would take 40 s.
  for (char c : request) {
    if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 || ClosedByServer(fd, 1.0)) {
      cut = true;
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(cut);
  EXPECT_GE(seconds, 1.5);
  EXPECT_LT(seconds, 4.0);
  close(fd);
}

TEST(HttpEndpoint, OversizedHeadsAndBodiesAreRefused) {
  HttpEndpoint endpoint("127.0.0.1:0", Hello);
  const HttpReply big = HttpExchange(
      endpoint.port(), "GET / HTTP/1.1\r\nX-Big: " + std::string(20 << 10, 'a') + "\r\n\r\n");
  EXPECT_EQ(big.status, 431) << big.head;
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 100; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  EXPECT_EQ(HttpExchange(endpoint.port(), many + "\r\n").status, 431);
  EXPECT_EQ(
      HttpExchange(endpoint.port(), "GET / HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n").status,
      413);
  EXPECT_EQ(HttpExchange(endpoint.port(), "POST / HTTP/1.1\r\n\r\n").status, 405);
  EXPECT_EQ(HttpExchange(endpoint.port(), "GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").status,
            200);
}

TEST(HttpEndpoint, ServesTlsWithTheCoordinatorsCertificate) {
  const std::string dir = testing::HttpTestDir("http-tls");
  testing::TestPki pki;
  ASSERT_EQ(testing::MakeTestPki(dir, &pki), "");
  HttpOptions options;
  options.tls_cert = pki.server_cert;
  options.tls_key = pki.server_key;
  HttpEndpoint endpoint("127.0.0.1:0", Hello, options);
  EXPECT_TRUE(endpoint.tls());
  const HttpReply r = HttpExchange(endpoint.port(), kGet, pki.ca);
  EXPECT_EQ(r.status, 200) << r.head;
  EXPECT_EQ(r.body, "hello /metrics");
  EXPECT_NE(r.Header("Strict-Transport-Security"), "");
  // Plaintext to the TLS port gets no HTTP answer.
  EXPECT_EQ(HttpExchange(endpoint.port(), kGet, "", 2).status, 0);
  // A client that trusts another CA does not get through the handshake.
  EXPECT_EQ(HttpExchange(endpoint.port(), kGet, pki.rogue_ca).status, 0);
  // Idle TLS connections (no ClientHello) hold nothing either.
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) idle.push_back(testing::ConnectLoopback(endpoint.port()));
  const HttpReply after = HttpExchange(endpoint.port(), kGet, pki.ca);
  EXPECT_EQ(after.status, 200);
  EXPECT_LT(after.seconds, 1.0);
  for (int fd : idle) close(fd);
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Out of descriptors, a pending connection keeps the listening socket readable: the loop must
// wait for descriptors to free up rather than spin on it.
TEST(HttpEndpoint, OutOfDescriptorsItWaitsInsteadOfSpinning) {
  HttpEndpoint endpoint("127.0.0.1:0", Hello);
  rlimit old{};
  getrlimit(RLIMIT_NOFILE, &old);
  rlimit low = old;
  low.rlim_cur = 64;  // the test's connections and the endpoint's accepted ones share these
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fds;
  for (int round = 0; round < 3; ++round) {
    for (int fd; (fd = testing::ConnectLoopback(endpoint.port())) >= 0;) fds.push_back(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double cpu = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LT(CpuSeconds() - cpu, 0.3);
  for (int fd : fds) close(fd);
  setrlimit(RLIMIT_NOFILE, &old);
  const HttpReply r = HttpExchange(endpoint.port(), kGet);
  EXPECT_EQ(r.status, 200);
  EXPECT_LT(r.seconds, 1.0);
}

TEST(HttpEndpoint, RefusesPlaintextOffLoopbackUnlessAsked) {
  try {
    HttpEndpoint endpoint("0.0.0.0:0", Hello);
    ADD_FAILURE() << "served plaintext on 0.0.0.0";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--http-plaintext"), std::string::npos) << e.what();
  }
  HttpOptions asked;
  asked.plaintext_off_loopback = true;
  HttpEndpoint endpoint("0.0.0.0:0", Hello, asked);
  EXPECT_EQ(HttpExchange(endpoint.port(), kGet).status, 200);
  HttpEndpoint loopback("127.0.0.1:0", Hello);  // loopback needs no TLS
  EXPECT_GT(loopback.port(), 0);
}

}  // namespace http_endpoint_test
}  // namespace sift::coordinator

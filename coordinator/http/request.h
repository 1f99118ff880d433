// HTTP/1.1 requests as the --http endpoint reads them: the parser and the limits that bound what
// a client may send. Kept apart from the socket code so the fuzzer (fuzz/http_request_fuzz.cc)
// can drive it directly.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sift::coordinator {

struct HttpRequest {
  std::string method;                          // GET or HEAD
  std::string path;                            // without the query
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // names lower-cased
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body)
      : status(status), content_type(std::move(content_type)), body(std::move(body)) {}
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra: Location, Set-Cookie
};

// What one client may send and how long it may take. A bound that is hit answers (431, 413,
// 408) or closes the connection; docs/security.md lists them.
struct HttpLimits {
  size_t max_head_bytes = 16 << 10;  // request line and headers; over: 431
  int max_headers = 64;              // over: 431
  size_t max_body_bytes = 8 << 10;   // GET and HEAD need none; over: 413
  double request_deadline_s = 10;    // from accept to the whole request (TLS handshake too)
  double write_deadline_s = 30;      // to send the answer
  int max_connections = 512;         // at the cap, the oldest unfinished request is dropped
};

// Parses "GET /path?a=b HTTP/1.1\r\nName: value\r\n..." (the head, without the blank line).
// Returns "" or what is wrong with it.
std::string ParseHttpRequest(const std::string& head, HttpRequest* out);

// Where reading a request stands, given every byte received so far.
struct HttpRequestScan {
  enum State { kNeedMore, kComplete, kReject } state = kNeedMore;
  HttpRequest request;  // when kComplete
  int status = 0;       // when kReject: 400, 413 or 431
  std::string problem;  // when kReject
};
HttpRequestScan ScanHttpRequest(std::string_view received, const HttpLimits& limits);

// "a=b; sift_session=X" -> the value of `name`, or "".
std::string CookieValue(const std::string& header, const std::string& name);

}  // namespace sift::coordinator

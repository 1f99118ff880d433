// A small HTTP/1.1 server for what browsers and Prometheus read: GET and HEAD only, one
// request per connection, answered in turn by one thread. The coordinator's work is served
// over gRPC; this endpoint only reads, so it stays deliberately simple and bounded (headers up
// to 16 KiB, 5 s to send them).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

namespace sift::coordinator {

struct HttpRequest {
  std::string method;                        // GET or HEAD
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // decoded
  std::map<std::string, std::string> headers;  // names lower-cased
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpEndpoint {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Binds `listen` ("127.0.0.1:0" picks a free port); throws std::runtime_error naming the
  // address when it cannot.
  HttpEndpoint(const std::string& listen, Handler handler);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  void Serve();
  void Answer(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Parses "GET /path?a=b HTTP/1.1\r\nName: value\r\n..." (the head, without the blank line).
// Returns "" or what is wrong with it.
std::string ParseHttpRequest(const std::string& head, HttpRequest* out);

}  // namespace sift::coordinator

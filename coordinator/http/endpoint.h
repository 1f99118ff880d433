// A small HTTP/1.1 server for what browsers and Prometheus read: GET and HEAD only, one request
// per connection. One thread runs an event loop over non-blocking sockets, so a client that is
// slow or silent holds nothing but its own slot, and every slot has a deadline (HttpLimits).
// TLS with the coordinator's certificate; plaintext off loopback only when asked for.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/http/request.h"

namespace sift::coordinator {

class HttpTlsContext;

struct HttpOptions {
  std::string tls_cert, tls_key;        // PEM files: serve TLS only
  bool plaintext_off_loopback = false;  // --http-plaintext: serve a non-loopback address anyway
  HttpLimits limits;
};

class HttpEndpoint {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Binds `listen` ("127.0.0.1:0" picks a free port); throws std::runtime_error naming the
  // address when it cannot, or when it would serve plaintext off loopback unasked.
  HttpEndpoint(const std::string& listen, Handler handler, HttpOptions options = {});
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }
  bool tls() const { return tls_ != nullptr; }

 private:
  struct Conn;
  void Serve();
  // Accepts what is pending; false when the process ran out of descriptors.
  bool Accept(std::vector<std::unique_ptr<Conn>>* conns);
  void Step(Conn* c);
  std::string Answer(const HttpRequestScan& scan);

  Handler handler_;
  HttpLimits limits_;
  std::unique_ptr<HttpTlsContext> tls_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace sift::coordinator

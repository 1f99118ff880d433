// What `sift coordinator --http ADDR` serves: the report page, live (/), Prometheus metrics
// (/metrics) and a liveness check (/healthz). Everything but /healthz needs a viewer (or user)
// token when the coordinator has credentials: `Authorization: Bearer T` (Prometheus), or
// `?token=T` once in a browser's address bar, answered with a session cookie and a redirect to
// the same page without the token (sessions.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/core/coordinator.h"
#include "coordinator/http/endpoint.h"
#include "coordinator/http/sessions.h"
#include "coordinator/rpc/server.h"

namespace sift::coordinator {

// Builds the page from the studies as they are now (each request: the page polls).
using LivePage = std::function<std::string(Coordinator&)>;

// The page when no richer one is given: each study's summary and trial table, refreshed.
std::string TextReportPage(Coordinator& coordinator);

// The HTML report (html_report.h) of database `db`, read on its own read-only connection at
// each request and reloading itself every `refresh_s` seconds.
LivePage HtmlReportPage(const std::string& db, int refresh_s = 5);

class LiveHttp {
 public:
  // Throws std::runtime_error when `listen` cannot be bound (or, without TLS, is off loopback
  // and options.plaintext_off_loopback is not set).
  LiveHttp(const std::string& listen, Coordinator* coordinator, const Server* server,
           LivePage page = TextReportPage, HttpOptions options = {});
  int port() const { return endpoint_->port(); }

 private:
  HttpResponse Handle(const HttpRequest& req);
  HttpResponse ExchangeToken(const HttpRequest& req, const std::string& token);

  Coordinator* coordinator_;
  const Server* server_;
  LivePage page_;
  HttpSessions sessions_;
  std::unique_ptr<HttpEndpoint> endpoint_;
};

}  // namespace sift::coordinator

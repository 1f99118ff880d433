#include "coordinator/http/live.h"

#include "coordinator/core/study_metrics.h"
#include "coordinator/report/html/html_report.h"
#include "coordinator/report/html/svg.h"
#include "coordinator/report/report.h"
#include "coordinator/rpc/authorization.h"

namespace sift::coordinator {
namespace {

using html::Escape;  // the report's own, for text and attribute values

// The same access as reading studies over gRPC (viewer, user).
constexpr const char* kReadAccess = "/sift.v1.Studies/ListStudies";

}  // namespace

std::string TextReportPage(Coordinator& coordinator) {
  std::string body;
  for (const auto& study : coordinator.ListStudies()) {
    StudyReport report;
    report.study = study;
    report.objectives = study.objectives;  // several: the frontier (empty for one)
    report.constraints = study.constraints;
    if (!coordinator.ListTrials(study.record.id, &report.trials).ok()) continue;
    report.exploits = coordinator.ListExploits(study.record.id);  // a PBT study's lineage so far
    body += "<h2>" + Escape(study.record.name) + " (study " + std::to_string(study.record.id) +
            ")</h2>\n<pre>" + Escape(FormatSummary(report)) + "\n" + Escape(FormatTable(report)) +
            "</pre>\n";
  }
  if (body.empty()) body = "<p>No studies yet.</p>\n";
  // Reloads itself: a live view with no script to go wrong.
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" "
         "content=\"2\"><title>Sift</title></head><body>\n" +
         body + "</body></html>\n";
}

LivePage HtmlReportPage(const std::string& db, int refresh_s) {
  return [db, refresh_s](Coordinator&) {
    std::string page = RenderHtmlReport(LoadHtmlReport(db, 0, std::nullopt));
    const size_t head = page.find("<head>");
    if (head != std::string::npos) {
      page.insert(head + 6,
                  "<meta http-equiv=\"refresh\" content=\"" + std::to_string(refresh_s) + "\">");
    }
    return page;
  };
}

LiveHttp::LiveHttp(const std::string& listen, Coordinator* coordinator, const Server* server,
                   LivePage page, HttpOptions options)
    : coordinator_(coordinator), server_(server), page_(std::move(page)) {
  endpoint_ = std::make_unique<HttpEndpoint>(
      listen, [this](const HttpRequest& req) { return Handle(req); }, std::move(options));
}

namespace {

HttpResponse Refusal(const grpc::Status& status) {
  const int code = status.error_code() == grpc::StatusCode::UNAUTHENTICATED ? 401 : 403;
  return {code, "text/plain; charset=utf-8", status.error_message() + "\n"};
}

}  // namespace

// The token is checked, then traded for a session: the answer sends the browser back to the
// page without it, so it stays out of history, bookmarks and Referer headers.
HttpResponse LiveHttp::ExchangeToken(const HttpRequest& req, const std::string& token) {
  const std::string authorization = "Bearer " + token;
  const grpc::Status allowed = server_->authorizer().Decide(kReadAccess, &authorization, false);
  if (!allowed.ok()) return Refusal(allowed);
  // Only known pages: the decoded path is never echoed into a header.
  const std::string target = req.path == "/metrics" ? "/metrics" : "/";
  HttpResponse r{303, "text/plain; charset=utf-8", "see " + target + "\n"};
  r.headers = {{"Location", target},
               {"Set-Cookie", sessions_.Cookie(sessions_.Open(authorization), endpoint_->tls())}};
  return r;
}

HttpResponse LiveHttp::Handle(const HttpRequest& req) {
  if (req.path == "/healthz") return {200, "text/plain; charset=utf-8", "ok\n"};
  if (auto q = req.query.find("token"); q != req.query.end()) return ExchangeToken(req, q->second);
  std::string authorization;
  if (auto it = req.headers.find("authorization"); it != req.headers.end()) {
    authorization = it->second;
  } else if (auto c = req.headers.find("cookie"); c != req.headers.end()) {
    authorization = sessions_.Find(CookieValue(c->second, HttpSessions::kCookie));
  }
  const grpc::Status allowed = server_->authorizer().Decide(
      kReadAccess, authorization.empty() ? nullptr : &authorization, false);
  if (!allowed.ok()) return Refusal(allowed);
  if (req.path == "/metrics") {
    return {
        200, "text/plain; version=0.0.4; charset=utf-8",
        StudyMetricsText(coordinator_->ListStudies()) + server_->rpc_metrics().PrometheusText()};
  }
  if (req.path == "/" || req.path == "/index.html") {
    return {200, "text/html; charset=utf-8", page_(*coordinator_)};
  }
  return {404, "text/plain; charset=utf-8", "no page " + req.path + " (try /, /metrics)\n"};
}

}  // namespace sift::coordinator

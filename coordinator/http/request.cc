#include "coordinator/http/request.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"

namespace sift::coordinator {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Trim(const std::string& s) { return common::Trim(s, " \t"); }  // HTTP's OWS

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 &&
               HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool HasControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// RFC 9110 token characters, the only ones a header name may hold.
bool IsToken(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

HttpRequestScan Reject(int status, std::string problem) {
  HttpRequestScan scan;
  scan.state = HttpRequestScan::kReject;
  scan.status = status;
  scan.problem = std::move(problem);
  return scan;
}

}  // namespace

std::string ParseHttpRequest(const std::string& head, HttpRequest* out) {
  size_t eol = head.find("\r\n");
  const std::string line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
    return "malformed request line";
  }
  out->method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target[0] != '/') return "the target must be a path";
  const size_t q = target.find('?');
  out->path = Decode(target.substr(0, q));
  // A decoded CR or LF would split a header the path is echoed into (a redirect's Location).
  if (HasControl(out->path)) return "control character in the path";
  if (q != std::string::npos) {
    std::string rest = target.substr(q + 1);
    size_t start = 0;
    while (start <= rest.size()) {
      const size_t amp = std::min(rest.find('&', start), rest.size());
      const std::string pair = rest.substr(start, amp - start);
      const size_t eq = pair.find('=');
      if (!pair.empty()) {
        out->query[Decode(pair.substr(0, eq))] =
            eq == std::string::npos ? "" : Decode(pair.substr(eq + 1));
      }
      start = amp + 1;
    }
  }
  while (eol != std::string::npos && eol + 2 < head.size()) {
    const size_t next = head.find("\r\n", eol + 2);
    const std::string h =
        head.substr(eol + 2, next == std::string::npos ? std::string::npos : next - eol - 2);
    const size_t colon = h.find(':');
    if (colon == std::string::npos || !IsToken(h.substr(0, colon))) {
      return "malformed header line";
    }
    out->headers[Lower(h.substr(0, colon))] = Trim(h.substr(colon + 1));
    eol = next;
  }
  return "";
}

HttpRequestScan ScanHttpRequest(std::string_view received, const HttpLimits& limits) {
  const size_t end = received.find("\r\n\r\n");
  const std::string_view head = received.substr(0, end);
  // Counted before the head is complete, so a client cannot hold many lines pending.
  const size_t lines = static_cast<size_t>(std::count(head.begin(), head.end(), '\n'));
  if (head.size() > limits.max_head_bytes) {
    return Reject(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");
  }
  if (lines > static_cast<size_t>(limits.max_headers)) {
    return Reject(431, "over " + std::to_string(limits.max_headers) + " header lines");
  }
  if (end == std::string_view::npos) return {};
  HttpRequestScan scan;
  if (std::string p = ParseHttpRequest(std::string(head), &scan.request); !p.empty()) {
    return Reject(400, p);
  }
  const auto& headers = scan.request.headers;
  if (headers.count("transfer-encoding")) return Reject(400, "Transfer-Encoding not supported");
  size_t body = 0;
  if (auto it = headers.find("content-length"); it != headers.end()) {
    const std::string& v = it->second;
    if (v.empty() || v.size() > 18 ||
        !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return Reject(400, "malformed Content-Length");
    }
    body = std::stoull(v);
    if (body > limits.max_body_bytes) {
      return Reject(413, "request body over " + std::to_string(limits.max_body_bytes) + " bytes");
    }
  }
  if (received.size() - end - 4 < body) return {};
  scan.state = HttpRequestScan::kComplete;
  return scan;
}

std::string CookieValue(const std::string& header, const std::string& name) {
  size_t start = 0;
  while (start < header.size()) {
    const size_t semi = std::min(header.find(';', start), header.size());
    const std::string pair = Trim(header.substr(start, semi - start));
    const size_t eq = pair.find('=');
    if (eq != std::string::npos && pair.compare(0, eq, name) == 0 && eq == name.size()) {
      return pair.substr(eq + 1);
    }
    start = semi + 1;
  }
  return "";
}

}  // namespace sift::coordinator

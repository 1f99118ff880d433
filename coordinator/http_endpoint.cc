#include "coordinator/http_endpoint.h"

#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

namespace sift::coordinator {
namespace {

constexpr size_t kMaxHead = 16 << 10;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

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

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    default: return status < 500 ? "Error" : "Internal Server Error";
  }
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
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
    const std::string h = head.substr(eol + 2, next == std::string::npos ? std::string::npos
                                                                         : next - eol - 2);
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return "malformed header line";
    out->headers[Lower(h.substr(0, colon))] = Trim(h.substr(colon + 1));
    eol = next;
  }
  return "";
}

HttpEndpoint::HttpEndpoint(const std::string& listen, Handler handler)
    : handler_(std::move(handler)) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error("--http " + listen + ": expected HOST:PORT");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = listen.substr(colon + 1);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    throw std::runtime_error("--http " + listen + ": " + gai_strerror(rc));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) throw std::runtime_error("--http " + listen + ": cannot listen: " + why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  thread_ = std::thread([this] { Serve(); });
}

HttpEndpoint::~HttpEndpoint() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void HttpEndpoint::Serve() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // A client that stalls holds the endpoint for at most these timeouts.
    timeval t{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
    Answer(fd);
    close(fd);
  }
}

void HttpEndpoint::Answer(int fd) {
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() <= kMaxHead) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  HttpRequest req;
  HttpResponse resp;
  const size_t end = head.find("\r\n\r\n");
  if (end == std::string::npos) {
    resp = {431, "text/plain; charset=utf-8", "request head over 16 KiB\n"};
  } else if (std::string problem = ParseHttpRequest(head.substr(0, end), &req); !problem.empty()) {
    resp = {400, "text/plain; charset=utf-8", problem + "\n"};
  } else if (req.method != "GET" && req.method != "HEAD") {
    resp = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
  } else {
    try {
      resp = handler_(req);
    } catch (const std::exception& e) {
      spdlog::error("http {}: {}", req.path, e.what());
      resp = {500, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
    }
  }
  std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " " + Reason(resp.status) +
                    "\r\nContent-Type: " + resp.content_type +
                    "\r\nContent-Length: " + std::to_string(resp.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  if (resp.status == 401) out += "WWW-Authenticate: Bearer\r\n";
  out += "\r\n";
  if (req.method != "HEAD") out += resp.body;
  SendAll(fd, out);
}

}  // namespace sift::coordinator

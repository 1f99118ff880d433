#include "coordinator/http/endpoint.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "coordinator/http/stream.h"

namespace sift::coordinator {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 303:
      return "See Other";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return status < 500 ? "Error" : "Internal Server Error";
  }
}

bool IsLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  }
  return a.ss_family == AF_INET6 &&
         IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
}

// The socket bound to `listen`, and the address it got; throws naming `listen`.
int Listen(const std::string& listen, sockaddr_storage* bound) {
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
  int listen_fd = -1;
  for (addrinfo* a = found; a && listen_fd < 0; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd < 0) throw std::runtime_error("--http " + listen + ": cannot listen: " + why);
  socklen_t len = sizeof *bound;
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(bound), &len);
  return listen_fd;
}

}  // namespace

struct HttpEndpoint::Conn {
  enum Phase { kHandshake, kReading, kWriting, kDraining, kDone };
  explicit Conn(std::unique_ptr<HttpStream> s) : stream(std::move(s)) {}
  std::unique_ptr<HttpStream> stream;
  Phase phase = kHandshake;
  bool want_write = false;  // what the stream waits for: POLLOUT, else POLLIN
  std::string in, out;
  size_t sent = 0;
  Clock::time_point deadline;
};

HttpEndpoint::HttpEndpoint(const std::string& listen, Handler handler, HttpOptions options)
    : handler_(std::move(handler)), limits_(options.limits) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw std::runtime_error("--http: TLS needs both --tls-cert and --tls-key");
  }
  if (!options.tls_cert.empty()) {
    tls_ = std::make_unique<HttpTlsContext>(options.tls_cert, options.tls_key);
  }
  sockaddr_storage bound{};
  listen_fd_ = Listen(listen, &bound);
  if (!tls_ && !options.plaintext_off_loopback && !IsLoopback(bound)) {
    close(listen_fd_);
    throw std::runtime_error(
        "--http " + listen +
        ": plaintext off loopback would show tokens and session cookies to the network; give "
        "--tls-cert and --tls-key, or --http-plaintext to serve it anyway (docs/security.md)");
  }
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  thread_ = std::thread([this] { Serve(); });
}

HttpEndpoint::~HttpEndpoint() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void HttpEndpoint::Serve() {
  // A peer that closes early must not kill the process when OpenSSL writes to its socket
  // (plain sends use MSG_NOSIGNAL); SIGPIPE goes to the thread that wrote.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<pollfd> fds;
  Clock::time_point accept_again{};  // a pause after running out of descriptors
  while (!stopping_) {
    fds.assign(
        1, pollfd{listen_fd_, static_cast<short>(Clock::now() >= accept_again ? POLLIN : 0), 0});
    Clock::time_point wake = After(0.2);  // to notice stopping_
    for (const auto& c : conns) {
      fds.push_back({c->stream->fd(), static_cast<short>(c->want_write ? POLLOUT : POLLIN), 0});
      wake = std::min(wake, c->deadline);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now());
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0))) < 0) {
      continue;  // EINTR
    }
    for (size_t i = 0; i < conns.size(); ++i) {
      if (fds[i + 1].revents != 0) Step(conns[i].get());
    }
    // Past its deadline a connection is closed, whatever it was doing (slow clients).
    const Clock::time_point now = Clock::now();
    conns.erase(std::remove_if(
                    conns.begin(), conns.end(),
                    [now](const auto& c) { return c->phase == Conn::kDone || now >= c->deadline; }),
                conns.end());
    // Without descriptors the pending connection stays readable: polling it would spin.
    if (fds[0].revents != 0 && !Accept(&conns)) accept_again = After(0.1);
  }
}

bool HttpEndpoint::Accept(std::vector<std::unique_ptr<Conn>>* conns) {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM;
    if (conns->size() >= static_cast<size_t>(limits_.max_connections)) {
      // At the cap the oldest request still unread makes room: idle connections cannot shut the
      // door on new ones, they only shorten each other's time.
      auto oldest = std::find_if(conns->begin(), conns->end(), [](const auto& c) {
        return c->phase == Conn::kHandshake || c->phase == Conn::kReading;
      });
      if (oldest == conns->end()) {
        close(fd);
        continue;
      }
      conns->erase(oldest);
    }
    std::unique_ptr<Conn> c;
    try {
      c = std::make_unique<Conn>(std::make_unique<HttpStream>(fd, tls_.get()));
    } catch (const std::exception& e) {  // the stream closed fd
      spdlog::warn("http: {}", e.what());
      continue;
    }
    c->deadline = After(limits_.request_deadline_s);
    Step(c.get());
    if (c->phase != Conn::kDone) conns->push_back(std::move(c));
  }
}

// Advances one connection as far as its socket allows without blocking.
void HttpEndpoint::Step(Conn* c) {
  char buf[4096];
  for (;;) {
    HttpIo io = HttpIo::kDone;
    size_t n = 0;
    switch (c->phase) {
      case Conn::kHandshake:
        io = c->stream->Handshake();
        if (io == HttpIo::kDone) c->phase = Conn::kReading;
        break;
      case Conn::kReading:
        io = c->stream->Read(buf, sizeof buf, &n);
        if (io == HttpIo::kDone) {
          c->in.append(buf, n);
          const HttpRequestScan scan = ScanHttpRequest(c->in, limits_);
          if (scan.state != HttpRequestScan::kNeedMore) {
            c->out = Answer(scan);
            c->in.clear();
            c->phase = Conn::kWriting;
            c->deadline = After(limits_.write_deadline_s);
          }
        }
        break;
      case Conn::kWriting:
        io = c->stream->Write(c->out.data() + c->sent, c->out.size() - c->sent, &n);
        if (io == HttpIo::kDone && (c->sent += n) == c->out.size()) {
          c->stream->ShutdownWrite();
          // Reads what the client still sends (an oversized head's rest) before closing, so
          // the close does not reset the connection and lose the answer.
          c->phase = Conn::kDraining;
          c->deadline = std::min(c->deadline, After(1));
        }
        break;
      case Conn::kDraining:
        io = c->stream->Read(buf, sizeof buf, &n);
        break;
      case Conn::kDone:
        return;
    }
    if (io == HttpIo::kClosed) c->phase = Conn::kDone;
    if (io != HttpIo::kDone) {
      c->want_write = io == HttpIo::kWantWrite;
      return;
    }
  }
}

std::string HttpEndpoint::Answer(const HttpRequestScan& scan) {
  const HttpRequest& req = scan.request;
  HttpResponse resp;
  if (scan.state == HttpRequestScan::kReject) {
    resp = {scan.status, "text/plain; charset=utf-8", scan.problem + "\n"};
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
                    "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff"
                    "\r\nConnection: close\r\n";
  if (resp.status == 401) out += "WWW-Authenticate: Bearer\r\n";
  if (tls_) out += "Strict-Transport-Security: max-age=31536000\r\n";
  for (const auto& [name, value] : resp.headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  if (req.method != "HEAD") out += resp.body;
  return out;
}

}  // namespace sift::coordinator

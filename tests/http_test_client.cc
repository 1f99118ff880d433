#include "tests/http_test_client.h"

#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include "tests/temp_cleanup.h"

namespace sift::testing {

std::string HttpReply::Header(const std::string& name) const {
  std::smatch m;
  if (std::regex_search(head, m, std::regex("\r\n" + name + ": ([^\r]*)"))) return m[1];
  return "";
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string ReadAll(int fd, double timeout_s) {
  std::string all;
  char buf[8192];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) <= 0) break;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  return all;
}

HttpReply ParseReply(const std::string& all) {
  HttpReply r;
  std::smatch m;
  if (std::regex_search(all, m, std::regex("^HTTP/1\\.1 (\\d+)"))) r.status = std::stoi(m[1]);
  const size_t end = all.find("\r\n\r\n");
  r.head = all.substr(0, end);
  if (end != std::string::npos) r.body = all.substr(end + 4);
  return r;
}

namespace {

std::string TlsExchange(int fd, const std::string& request, const std::string& ca,
                        double timeout_s) {
  timeval t{static_cast<time_t>(timeout_s), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, "localhost");
  SSL_set1_host(ssl, "localhost");
  std::string all;
  if (SSL_connect(ssl) == 1 &&
      SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
    char buf[8192];
    for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return all;
}

}  // namespace

std::string HttpTestDir(const std::string& name) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / ("sift-" + name + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  RemoveAtExitIfPassed(tmpl);
  return tmpl;
}

HttpReply HttpExchange(int port, const std::string& request, const std::string& ca,
                       double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  const int fd = ConnectLoopback(port);
  if (fd < 0) return {};
  std::string all;
  if (!ca.empty()) {
    all = TlsExchange(fd, request, ca, timeout_s);
  } else {
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    all = ReadAll(fd, timeout_s);
  }
  close(fd);
  HttpReply r = ParseReply(all);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace sift::testing

#include "coordinator/http/stream.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace sift::coordinator {
namespace {

std::string OpenSslError() {
  char buf[256] = "";
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

HttpIo SocketResult(ssize_t rc, size_t* n) {
  if (rc > 0) {
    *n = static_cast<size_t>(rc);
    return HttpIo::kDone;
  }
  if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return HttpIo::kWantRead;  // the caller knows which way it was going
  }
  return HttpIo::kClosed;
}

}  // namespace

HttpTlsContext::HttpTlsContext(const std::string& cert, const std::string& key) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr) throw std::runtime_error("TLS: " + OpenSslError());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // A partial write resumes from a buffer that may have moved (std::string grows).
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  std::string problem;
  if (SSL_CTX_use_certificate_chain_file(ctx_, cert.c_str()) != 1) {
    problem = "--tls-cert " + cert + ": " + OpenSslError();
  } else if (SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    problem = "--tls-key " + key + ": " + OpenSslError();
  } else if (SSL_CTX_check_private_key(ctx_) != 1) {
    problem = "--tls-key " + key + " does not match --tls-cert " + cert;
  }
  if (!problem.empty()) {
    SSL_CTX_free(ctx_);
    throw std::runtime_error(problem);
  }
}

HttpTlsContext::~HttpTlsContext() { SSL_CTX_free(ctx_); }

HttpStream::HttpStream(int fd, const HttpTlsContext* tls) : fd_(fd) {
  if (tls == nullptr) return;
  ssl_ = SSL_new(tls->get());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) {
    SSL_free(ssl_);
    close(fd);
    throw std::runtime_error("TLS: " + OpenSslError());
  }
  SSL_set_accept_state(ssl_);
}

HttpStream::~HttpStream() {
  SSL_free(ssl_);
  close(fd_);
}

HttpIo HttpStream::TlsResult(int rc) {
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
      return HttpIo::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return HttpIo::kWantWrite;
    default:
      ERR_clear_error();
      return HttpIo::kClosed;
  }
}

HttpIo HttpStream::Handshake() {
  if (ssl_ == nullptr) return HttpIo::kDone;
  const int rc = SSL_do_handshake(ssl_);
  return rc == 1 ? HttpIo::kDone : TlsResult(rc);
}

HttpIo HttpStream::Read(char* buf, size_t size, size_t* n) {
  if (ssl_ == nullptr) return SocketResult(recv(fd_, buf, size, 0), n);
  const int rc = SSL_read_ex(ssl_, buf, size, n);
  return rc == 1 ? HttpIo::kDone : TlsResult(rc);
}

HttpIo HttpStream::Write(const char* buf, size_t size, size_t* n) {
  if (ssl_ == nullptr) {
    const HttpIo r = SocketResult(send(fd_, buf, size, MSG_NOSIGNAL), n);
    return r == HttpIo::kWantRead ? HttpIo::kWantWrite : r;
  }
  const int rc = SSL_write_ex(ssl_, buf, size, n);
  return rc == 1 ? HttpIo::kDone : TlsResult(rc);
}

void HttpStream::ShutdownWrite() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);  // sends close_notify; the peer's is not awaited
    ERR_clear_error();
  }
  shutdown(fd_, SHUT_WR);
}

}  // namespace sift::coordinator

// The byte stream under one --http connection: a non-blocking socket, plain or under TLS. Each
// call returns at once; kWantRead/kWantWrite say what to poll for before calling again.
#pragma once

#include <cstddef>
#include <string>

struct ssl_st;
struct ssl_ctx_st;

namespace sift::coordinator {

enum class HttpIo { kDone, kWantRead, kWantWrite, kClosed };

// A server's TLS context: the certificate chain and its key (PEM), TLS 1.2 or newer.
class HttpTlsContext {
 public:
  // Throws std::runtime_error naming the file that cannot be loaded.
  HttpTlsContext(const std::string& cert, const std::string& key);
  ~HttpTlsContext();
  HttpTlsContext(const HttpTlsContext&) = delete;
  HttpTlsContext& operator=(const HttpTlsContext&) = delete;
  ssl_ctx_st* get() const { return ctx_; }

 private:
  ssl_ctx_st* ctx_ = nullptr;
};

class HttpStream {
 public:
  // Takes `fd` (non-blocking); `tls` null: plaintext.
  HttpStream(int fd, const HttpTlsContext* tls);
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  int fd() const { return fd_; }
  HttpIo Handshake();  // kDone at once in plaintext
  // kDone with *n > 0 bytes; kClosed at the end of the stream or on an error.
  HttpIo Read(char* buf, size_t size, size_t* n);
  HttpIo Write(const char* buf, size_t size, size_t* n);
  // Says nothing more will be sent (TLS close_notify, then FIN); reading may go on.
  void ShutdownWrite();

 private:
  HttpIo TlsResult(int rc);

  int fd_;
  ssl_st* ssl_ = nullptr;
};

}  // namespace sift::coordinator

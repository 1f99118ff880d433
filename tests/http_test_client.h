// A raw HTTP/1.1 client for the --http endpoint's tests: exact bytes in, the whole answer out,
// over plain TCP or TLS (verified against a CA file), each read bounded by a timeout.
#pragma once

#include <string>

namespace sift::testing {

struct HttpReply {
  int status = 0;  // 0: no HTTP answer (refused, closed, timed out)
  std::string head, body;
  double seconds = 0;  // from connect to the end of the answer
  // The value of header `name` (case as sent), or "".
  std::string Header(const std::string& name) const;
};

// A TCP connection to 127.0.0.1:port; -1 on failure.
int ConnectLoopback(int port);
// Reads until the peer closes or `timeout_s` passes without data.
std::string ReadAll(int fd, double timeout_s);
HttpReply ParseReply(const std::string& all);
// Sends `request` as is and reads the answer; `ca` non-empty: over TLS, verifying the server.
HttpReply HttpExchange(int port, const std::string& request, const std::string& ca = "",
                       double timeout_s = 5);

// A fresh directory under the system's temp directory (for TestPki files).
std::string HttpTestDir(const std::string& name);

}  // namespace sift::testing

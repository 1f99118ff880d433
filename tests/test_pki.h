// A throwaway certificate authority for TLS tests, made with the openssl command at test time:
// nothing secret is checked in, and nothing outlives the test's directory.
#pragma once

#include <string>

namespace sift::testing {

struct TestPki {
  std::string ca;                       // the CA certificate that signed everything below
  std::string server_cert, server_key;  // CN localhost, SAN DNS:localhost and IP:127.0.0.1
  std::string worker_cert, worker_key;  // a client certificate for mutual TLS
  std::string rogue_ca;                 // another CA, trusted by nobody
  std::string rogue_cert, rogue_key;    // a client certificate that rogue_ca signed
};

// Writes the files under `dir`; "" or the failing openssl command and its output.
std::string MakeTestPki(const std::string& dir, TestPki* out);

}  // namespace sift::testing

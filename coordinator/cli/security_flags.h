// `sift coordinator`'s security flags: TLS files and the per-role credentials (docs/security.md).
#pragma once

#include <string>

#include "coordinator/rpc/server.h"

namespace CLI {
class App;
}

namespace sift::coordinator {

struct SecurityFlags {
  ServerSecurity server;         // the TLS paths are filled by the flags
  std::string credentials_file;  // "ROLE TOKEN" lines
};

// Adds --tls-cert, --tls-key, --tls-client-ca and --credentials-file (--token is refused), and
// runs LoadSecurity once `cmd` is parsed (an error fails the parse, exit code 2).
void AddSecurityFlags(CLI::App* cmd, SecurityFlags* flags);
// Loads the credentials from --credentials-file and SIFT_WORKER_TOKEN, SIFT_USER_TOKEN,
// SIFT_VIEWER_TOKEN into flags->server; "" or an error naming the file or variable.
std::string LoadSecurity(SecurityFlags* flags);
// Logs what the coordinator listening on `listen` protects, and warns about what it does not.
void LogSecurity(const ServerSecurity& security, const std::string& listen);

}  // namespace sift::coordinator

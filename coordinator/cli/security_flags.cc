#include "coordinator/cli/security_flags.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "common/client_channel.h"

namespace sift::coordinator {

void AddSecurityFlags(CLI::App* cmd, SecurityFlags* flags) {
  cmd->add_option("--tls-cert", flags->server.tls_cert,
                  "server certificate chain (PEM): serve TLS only");
  cmd->add_option("--tls-key", flags->server.tls_key, "the certificate's private key (PEM)");
  cmd->add_option("--tls-client-ca", flags->server.tls_client_ca,
                  "CA (PEM) for mutual TLS: worker calls need a client certificate it signed");
  cmd->add_option("--credentials-file", flags->credentials_file,
                  "'ROLE TOKEN' lines, ROLE worker, user or viewer (or SIFT_WORKER_TOKEN, "
                  "SIFT_USER_TOKEN, SIFT_VIEWER_TOKEN)");
  common::RefuseTokenFlag(cmd,
                          "one token per role now: see --credentials-file and "
                          "docs/security.md");
  cmd->parse_complete_callback([flags] {
    if (std::string p = LoadSecurity(flags); !p.empty()) throw CLI::ValidationError(p, 2);
  });
}

std::string LoadSecurity(SecurityFlags* flags) {
  common::Credentials& creds = flags->server.credentials;
  if (!flags->credentials_file.empty()) {
    if (std::string p = creds.LoadFile(flags->credentials_file); !p.empty()) return p;
  }
  for (common::Role role : {common::Role::kWorker, common::Role::kUser, common::Role::kViewer}) {
    std::string var = std::string("SIFT_") + common::RoleName(role) + "_TOKEN";
    for (char& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (const char* t = std::getenv(var.c_str()); t != nullptr && *t != '\0') {
      if (std::string p = creds.Add(role, t, var); !p.empty()) return p;
    }
  }
  // SIFT_TOKEN used to make the coordinator require one shared token; ignoring it now would
  // silently open a coordinator that was closed.
  if (creds.empty() && std::getenv("SIFT_TOKEN") != nullptr) {
    return "SIFT_TOKEN is set, but the coordinator now takes one token per role: give "
           "--credentials-file or SIFT_WORKER_TOKEN/SIFT_USER_TOKEN/SIFT_VIEWER_TOKEN "
           "(docs/security.md), or unset SIFT_TOKEN to run without tokens";
  }
  return "";
}

void LogSecurity(const ServerSecurity& security, const std::string& listen) {
  const bool tls = !security.tls_cert.empty();
  const bool tokens = !security.credentials.empty();
  spdlog::info("transport: {}; tokens: {}",
               !tls                             ? "plaintext"
               : security.tls_client_ca.empty() ? "TLS"
                                                : "TLS, workers need a client certificate",
               tokens ? "one per role" : "none");
  if (!tokens) {
    spdlog::warn("no credentials: anyone who can reach {} can call every RPC (docs/security.md)",
                 listen);
  } else if (!tls) {
    spdlog::warn(
        "plaintext: anyone on the network path to {} can read the tokens "
        "(docs/security.md)",
        listen);
  }
}

}  // namespace sift::coordinator

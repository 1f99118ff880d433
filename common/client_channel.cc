#include "common/client_channel.h"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>

#include "common/credentials.h"

namespace sift::common {

void AddClientFlags(CLI::App* cmd, ClientOptions* o) {
  cmd->add_option("--coordinator", o->address, "coordinator address (HOST:PORT)");
  cmd->add_option("--tls-ca", o->tls_ca,
                  "CA certificate (PEM) that signed the coordinator's: connect over TLS");
  cmd->add_option("--tls-cert", o->tls_cert, "client certificate (PEM), for mutual TLS");
  cmd->add_option("--tls-key", o->tls_key, "client certificate's private key (PEM)");
  cmd->add_option("--token-file", o->token_file,
                  "file holding this caller's token (or SIFT_TOKEN)");
  RefuseTokenFlag(cmd, "put the token in a file for --token-file, or in SIFT_TOKEN");
  // Runs only when `cmd` is the command given; CLI11_PARSE prints the error and exits 2.
  cmd->parse_complete_callback([o] {
    if (std::string p = LoadClientOptions(o); !p.empty()) throw CLI::ValidationError(p, 2);
  });
}

void RefuseTokenFlag(CLI::App* cmd, const std::string& instead) {
  cmd->add_option_function<std::string>(
         "--token",
         [instead](const std::string&) {
           throw CLI::ValidationError("--token is gone (argv is visible in `ps`): " + instead, 2);
         })
      ->group("");
}

std::string LoadClientOptions(ClientOptions* o) {
  if (!o->token_file.empty()) {
    if (std::string p = ReadTokenFile(o->token_file, &o->token); !p.empty()) return p;
  } else if (const char* t = std::getenv("SIFT_TOKEN"); t != nullptr && *t != '\0') {
    o->token = t;
  }
  if (o->tls_cert.empty() != o->tls_key.empty()) {
    return "--tls-cert and --tls-key go together (a client certificate and its key)";
  }
  if (!o->tls_cert.empty() && o->tls_ca.empty()) {
    return "--tls-cert needs --tls-ca (the CA that signed the coordinator's certificate)";
  }
  if (!o->tls_ca.empty()) {
    if (std::string p = ReadWholeFile(o->tls_ca, false, &o->ca_pem); !p.empty()) return p;
  }
  if (!o->tls_cert.empty()) {
    if (std::string p = ReadWholeFile(o->tls_cert, false, &o->cert_pem); !p.empty()) return p;
    if (std::string p = ReadWholeFile(o->tls_key, true, &o->key_pem); !p.empty()) return p;
  }
  return "";
}

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& o,
                                           const grpc::ChannelArguments& args) {
  if (o.ca_pem.empty()) {
    return grpc::CreateCustomChannel(o.address, grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = o.ca_pem;
  ssl.pem_cert_chain = o.cert_pem;
  ssl.pem_private_key = o.key_pem;
  return grpc::CreateCustomChannel(o.address, grpc::SslCredentials(ssl), args);
}

std::string CurrentUser() {
  if (const char* u = getenv("USER"); u && *u) return u;
  // getpwuid_r: the client contexts of several threads get here at once (getpwuid's static
  // record is not thread-safe; TSan flagged it).
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found && found->pw_name) {
    return found->pw_name;
  }
  return "uid " + std::to_string(getuid());
}

std::unique_ptr<grpc::ClientContext> MakeContext(const std::string& token, double timeout_s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  // Who is calling, for a study's audit trail (x-sift-user).
  ctx->AddMetadata("x-sift-user", CurrentUser());
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  return ctx;
}

}  // namespace sift::common

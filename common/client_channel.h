// How the CLI and sift-worker reach the coordinator: its address, TLS (verified against a CA file,
// with an optional client certificate for mutual TLS) and the caller's token. One set of flags,
// added to any CLI11 command by AddClientFlags, so a new command gets them all in one line.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace sift::common {

struct ClientOptions {
  std::string address = "127.0.0.1:7070";
  std::string tls_ca;    // PEM CA that signed the coordinator's certificate; "" = plaintext
  std::string tls_cert;  // PEM client certificate and key, for a coordinator that asks for them
  std::string tls_key;
  std::string token_file;                 // the token's file; without it, $SIFT_TOKEN
  std::string token;                      // filled by LoadClientOptions, never from argv
  std::string ca_pem, cert_pem, key_pem;  // the files' contents, filled by LoadClientOptions
};

// Who is calling, for a study's audit trail: $USER, else the login name of this uid.
std::string CurrentUser();

// Adds --coordinator, --tls-ca, --tls-cert, --tls-key and --token-file to `cmd` (a --token flag
// is refused: argv is visible in `ps`), and loads *o with LoadClientOptions once `cmd` is parsed
// (a missing file fails the parse, exit code 2). A new command needs only this line, then
// MakeChannel(*o) and MakeContext(o->token).
void AddClientFlags(CLI::App* cmd, ClientOptions* o);
// Adds a hidden --token that fails the parse (exit code 2) saying what to use `instead`.
void RefuseTokenFlag(CLI::App* cmd, const std::string& instead);
// Reads the token (the file, else $SIFT_TOKEN) and the PEM files; "" or an error naming the file.
std::string LoadClientOptions(ClientOptions* o);
// A channel to o.address: TLS when o.tls_ca is set, plaintext otherwise.
std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& o,
                                           const grpc::ChannelArguments& args = {});
// A context carrying "authorization: Bearer <token>" when token is set, with a deadline.
std::unique_ptr<grpc::ClientContext> MakeContext(const std::string& token, double timeout_s = 30);

}  // namespace sift::common

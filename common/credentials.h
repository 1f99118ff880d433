// Who may call the coordinator: one bearer token per caller, each with one role. Tokens come from
// files or the environment, never from argv (argv is visible in `ps`). See docs/security.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sift::common {

// worker: only the Workers service. user: the Studies service, reads and writes. viewer: the
// Studies service's reads only.
enum class Role { kWorker, kUser, kViewer };

const char* RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

// The tokens a coordinator accepts and the role each one carries.
class Credentials {
 public:
  // Reads "ROLE TOKEN" lines ('#' starts a comment); "" or an error naming the file and line.
  std::string LoadFile(const std::string& path);
  // Adds one token; "" or an error naming `origin` (a file:line or an environment variable).
  std::string Add(Role role, const std::string& token, const std::string& origin);
  // The role of `token`, comparing every known token in constant time.
  std::optional<Role> Find(std::string_view token) const;
  bool empty() const { return tokens_.empty(); }
  bool Has(Role role) const;

 private:
  struct Entry {
    std::string token;
    Role role;
  };
  std::vector<Entry> tokens_;
};

// Reads a client's token: the file's first line, trimmed. "" or an error naming the file.
std::string ReadTokenFile(const std::string& path, std::string* token);
// Reads a whole file (a certificate, a key); "" or an error naming the file. A `secret` file that
// others can read is used, with a warning.
std::string ReadWholeFile(const std::string& path, bool secret, std::string* text);
// 32 random bytes from the kernel, as 64 hex digits.
std::string RandomToken();

}  // namespace sift::common

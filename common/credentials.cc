#include "common/credentials.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/text.h"

namespace sift::common {
namespace {

// Long enough that guessing is hopeless; `openssl rand -hex 32` gives 64.
constexpr size_t kMinTokenLength = 16;

// Tokens travel as HTTP/2 header values after "Bearer ": visible ASCII, no spaces.
std::string CheckToken(const std::string& token, const std::string& origin) {
  if (token.size() < kMinTokenLength) {
    return origin + ": token too short (" + std::to_string(token.size()) +
           " characters, at least " + std::to_string(kMinTokenLength) +
           "; generate one with `openssl rand -hex 32`)";
  }
  for (unsigned char c : token) {
    if (c <= ' ' || c > '~') return origin + ": token has a space or a non-ASCII character";
  }
  return "";
}

bool SameInConstantTime(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kWorker:
      return "worker";
    case Role::kUser:
      return "user";
    case Role::kViewer:
      return "viewer";
  }
  return "?";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kWorker, Role::kUser, Role::kViewer}) {
    if (name == RoleName(r)) return r;
  }
  return std::nullopt;
}

std::string Credentials::Add(Role role, const std::string& token, const std::string& origin) {
  if (std::string p = CheckToken(token, origin); !p.empty()) return p;
  for (const auto& e : tokens_) {
    if (e.token == token) {
      return origin + ": this token is already given to the " + RoleName(e.role) +
             " role; each role needs its own token";
    }
  }
  tokens_.push_back({token, role});
  return "";
}

std::string Credentials::LoadFile(const std::string& path) {
  std::string text;
  if (std::string p = ReadWholeFile(path, /*secret=*/true, &text); !p.empty()) return p;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string origin = path + ":" + std::to_string(line_no);
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string role_name, token, extra;
    fields >> role_name >> token >> extra;
    auto role = ParseRole(role_name);
    if (!role) {
      return origin + ": unknown role '" + role_name + "' (expected worker, user or viewer)";
    }
    if (token.empty() || !extra.empty()) return origin + ": expected 'ROLE TOKEN'";
    if (std::string p = Add(*role, token, origin); !p.empty()) return p;
  }
  if (tokens_.empty()) return path + ": no credentials (expected 'ROLE TOKEN' lines)";
  return "";
}

std::optional<Role> Credentials::Find(std::string_view token) const {
  std::optional<Role> found;
  for (const auto& e : tokens_) {
    if (SameInConstantTime(e.token, token)) found = e.role;  // no early exit: no timing signal
  }
  return found;
}

bool Credentials::Has(Role role) const {
  for (const auto& e : tokens_) {
    if (e.role == role) return true;
  }
  return false;
}

std::string ReadWholeFile(const std::string& path, bool secret, std::string* text) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return path + ": cannot read (" + std::strerror(errno) + ")";
  std::stringstream buf;
  buf << f.rdbuf();
  *text = buf.str();
  struct stat st {};
  if (secret && stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("{}: readable by other users (mode {:o}); chmod 600 it", path, st.st_mode & 0777);
  }
  return "";
}

std::string ReadTokenFile(const std::string& path, std::string* token) {
  std::string text;
  if (std::string p = ReadWholeFile(path, /*secret=*/true, &text); !p.empty()) return p;
  *token = Trim(text.substr(0, text.find('\n')));
  if (token->empty()) return path + ": empty (expected the token on its first line)";
  return CheckToken(*token, path);
}

std::string RandomToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    throw std::runtime_error("cannot read /dev/urandom for a token");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

}  // namespace sift::common

#include "coordinator/http/sessions.h"

#include <algorithm>
#include <iterator>

#include "common/credentials.h"

namespace sift::coordinator {

std::string HttpSessions::Open(const std::string& authorization) {
  const auto now = std::chrono::steady_clock::now();
  std::string id = common::RandomToken();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = it->second.expires <= now ? sessions_.erase(it) : std::next(it);
  }
  if (sessions_.size() >= max_) {
    sessions_.erase(std::min_element(sessions_.begin(), sessions_.end(), [](auto& a, auto& b) {
      return a.second.expires < b.second.expires;
    }));
  }
  sessions_[id] = {authorization, now + ttl_};
  return id;
}

std::string HttpSessions::Find(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return "";
  if (it->second.expires <= std::chrono::steady_clock::now()) {
    sessions_.erase(it);
    return "";
  }
  return it->second.authorization;
}

std::string HttpSessions::Cookie(const std::string& id, bool secure) const {
  return std::string(kCookie) + "=" + id + "; Path=/; Max-Age=" + std::to_string(ttl_.count()) +
         "; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "");
}

}  // namespace sift::coordinator
